import type http from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { ConfigError } from "@crm/config";
import type { Logger } from "@crm/logger";
import { expressServing, type HttpMessageClasses, type ServingOptions } from "./express-server";

export interface ListeningServer {
  server: http.Server;
  port: number;
  /** Where a caller on this machine reaches it (loopback when bound to every interface). */
  url: string;
  /** The address it is bound to, as `host:port` (`0.0.0.0:3000` when it listens on every interface). */
  boundTo: string;
  /** Stops accepting, lets in-flight requests finish (up to graceMs), then closes idle connections. */
  close(graceMs?: number): Promise<void>;
  /**
   * The start of a graceful stop, before close(): still serving, but /readyz answers 503 so balancers
   * take this replica out, and every answer says `Connection: close`, so a caller's kept-alive
   * connection ends with its next request, closed by the caller who knows it. Idle ones are left for
   * close(): closed now, a caller that has not yet seen the readiness could be sending on one as it
   * closes (a reset), where by close() the balancers have stopped sending.
   */
  drain(): void;
}

/** /readyz of a draining listener, whatever its checks would say (see ListeningServer.drain). */
const DRAINING_READINESS = JSON.stringify({ status: "not ready", draining: true });

/** The app as a draining listener serves it (ListeningServer.drain); swapped in, so serving costs nothing more before. */
function drainingHandler(app: Express): (req: http.IncomingMessage, res: http.ServerResponse) => void {
  return (req, res) => {
    res.setHeader("Connection", "close");
    if (req.url === "/readyz" || req.url?.startsWith("/readyz?")) {
      res.writeHead(503, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" }).end(DRAINING_READINESS);
      return;
    }
    app(req, res);
  };
}

/**
 * A service's app as a caller in the same process reaches it without a socket (the single process's
 * gateway): the app, as its HTTP server calls it, and the classes that server builds requests and
 * responses from, so a request built here has the shape and prototype of one off the wire.
 */
export interface InProcessHandler extends HttpMessageClasses {
  handle(req: http.IncomingMessage, res: http.ServerResponse): void;
  /** The `Host` a caller over HTTP sends (host:port of the listener). */
  host: string;
  /** False once the listener closed: a stopping service takes no new calls this way either. */
  readonly open: boolean;
}

/**
 * The in-process handler of each listener of this process, by its URL: a service's start() returns
 * its URL, and startService() finds its handler here, so no service has to pass it along by hand.
 */
const inProcessHandlers = new Map<string, InProcessHandler>();

export async function listen(app: Express, port: number, host: string, options: ServingOptions = {}): Promise<ListeningServer> {
  const { server, classes } = expressServing(app, options);
  // Keep-alive longer than typical load balancers' idle time-out, so they close first.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const actual = (server.address() as AddressInfo).port;
  const url = `http://${host.includes(":") ? `[${host}]` : host === "0.0.0.0" ? "127.0.0.1" : host}:${actual}`;
  inProcessHandlers.set(url, {
    handle: app,
    ...classes,
    host: new URL(url).host,
    get open() {
      return server.listening;
    },
  });
  return {
    server,
    port: actual,
    url,
    boundTo: `${host.includes(":") ? `[${host}]` : host}:${actual}`,
    close: (graceMs = 10_000) =>
      new Promise<void>((resolve) => {
        const force = setTimeout(() => server.closeAllConnections(), graceMs);
        force.unref();
        server.close(() => {
          clearTimeout(force);
          inProcessHandlers.delete(url);
          resolve();
        });
        server.closeIdleConnections();
      }),
    drain: () => {
      if (!server.listeners("request").includes(app)) return;
      server.removeListener("request", app);
      server.on("request", drainingHandler(app));
    },
  };
}

/** What a service's start() returns: where it listens and how to stop it cleanly. */
export interface RunningService {
  name: string;
  url: string;
  port: number;
  /** The app behind `url`, for a caller in the same process (see InProcessHandler). */
  inProcess?: InProcessHandler;
  stop(): Promise<void>;
  /**
   * What a process told to stop (SIGTERM) does before stop(): its listeners drain (ListeningServer.drain)
   * for the drain period (SHUTDOWN_DRAIN_MS), serving all along, so balancers stop sending before
   * the listeners close. stop() alone (tests, the single process's edge) skips it.
   */
  drain(): Promise<void>;
}

/** What has started so far, each part with its undo. */
export interface UndoStack {
  /** Registers how to undo the part just started and returns it, so a start step stays one line. */
  add<T>(part: T, undo: (part: T) => unknown): T;
  /** Registers an undo step of its own (a job started, a relay running). */
  push(undo: () => unknown): void;
  /**
   * Registers a listener: when the process is told to stop (RunningService.drain) it drains for
   * `drainMs` (SHUTDOWN_DRAIN_MS; 0: no wait) before the undo steps, and is closed in its turn.
   */
  listening(server: ListeningServer, drainMs?: number): ListeningServer;
}

/**
 * The one way a service starts and stops. `build` starts the parts in order (database, bus, jobs,
 * app, listen), registering each one's undo as soon as it runs; the undo steps run in reverse
 * order, once, on stop() or when a later step of the start throws, so a failed start leaves
 * nothing open. A failing undo step is logged and the others still run.
 */
export async function startService<T extends { url: string; port: number }>(name: string, logger: Logger, build: (undo: UndoStack) => Promise<T>): Promise<T & RunningService> {
  const steps: Array<() => unknown> = [];
  const listeners: ListeningServer[] = [];
  let drainMs = 0;
  const unwind = async () => {
    for (const step of steps.reverse().splice(0)) {
      try {
        await step();
      } catch (err) {
        logger.error({ err }, "shutdown step failed");
      }
    }
  };
  const undo: UndoStack = {
    add: (part, stop) => {
      steps.push(() => stop(part));
      return part;
    },
    push: (stop) => void steps.push(stop),
    listening: (server, ms = 0) => {
      listeners.push(server);
      drainMs = Math.max(drainMs, ms);
      steps.push(() => server.close());
      return server;
    },
  };
  let started: T;
  try {
    started = await build(undo);
  } catch (err) {
    await unwind();
    throw err;
  }
  let stopping: Promise<void> | undefined;
  let draining: Promise<void> | undefined;
  const inProcess = inProcessHandlers.get(started.url);
  return {
    ...started,
    name,
    ...(inProcess ? { inProcess } : {}),
    stop: () =>
      (stopping ??= unwind().then(() => {
        logger.info(`${name} stopped`);
      })),
    drain: () =>
      (draining ??= (async () => {
        for (const server of listeners) server.drain();
        logger.info({ drainMs }, `${name} draining: not ready, still serving`);
        if (drainMs > 0) await new Promise((resolve) => setTimeout(resolve, drainMs));
      })()),
  };
}

/**
 * Runs a service as a process: starts it, and on SIGTERM/SIGINT drains it (when it can: readiness
 * down, still serving, for SHUTDOWN_DRAIN_MS), then stops it once (in-flight requests finish, relays
 * and consumers flush and leave, connections close) and exits. A configuration error prints one
 * line naming the variable and exits 1.
 */
export function runProcess(start: () => Promise<{ stop(): Promise<void>; drain?(): Promise<void> }>, logger?: Logger): void {
  let stopping: Promise<void> | undefined;
  start()
    .then((running) => {
      const shutdown = (signal: string) => {
        if (stopping) return;
        logger?.info({ signal }, "shutting down");
        stopping = Promise.resolve(running.drain?.())
          .then(() => running.stop())
          .then(() => process.exit(0))
          .catch((err) => {
            logger?.error({ err }, "shutdown failed");
            process.exit(1);
          });
      };
      process.on("SIGTERM", () => shutdown("SIGTERM"));
      process.on("SIGINT", () => shutdown("SIGINT"));
    })
    .catch((err) => {
      if (err instanceof ConfigError) console.error(err.message);
      else if (logger) logger.fatal({ err }, "start-up failed");
      else console.error(err);
      process.exit(1);
    });
}
