// A redis-server of the test's own (the shared one on 6379 serves everyone's tests and must never be
// flushed or restarted), without persistence, as caches often run: restarting it empties it.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import Redis from "ioredis";
import { freePort } from "./free-port";
import { waitFor } from "./wait-for";

export interface OwnRedis {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: nothing is saved, clients see the connection drop). */
  kill(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Whether `redis-server` can be started here. */
export function redisServerAvailable(): boolean {
  return spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const start = async () => {
    const started = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], { stdio: "ignore" });
    child = started;
    await waitFor(
      async () => {
        if (started.exitCode !== null) throw new Error(`redis-server exited with code ${started.exitCode}`);
        const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        probe.on("error", () => undefined);
        try {
          await probe.connect();
          return (await probe.ping()) === "PONG";
        } catch {
          return false;
        } finally {
          probe.disconnect();
        }
      },
      10_000,
      25,
    );
  };
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once("exit", resolve));
    running.kill("SIGKILL");
    await exited;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, port, kill, start, stop: kill };
}
