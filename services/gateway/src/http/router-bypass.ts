// Forwarded requests skip Express's router (docs/performance.md D2). For them the router only walked
// its layers to run the same handlers in order, paying per layer a path match, a prefix trim, its
// next() and, for the nested forward router, a second walk. Here they run exactly those handlers,
// in the same order, with a failure going to the same error middleware; everything else (health,
// readiness, the public documents, unknown routes) and an app mounted inside another go through Express.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ErrorRequestHandler, Express, Request, RequestHandler, Response } from "express";
import { errors } from "@crm/errors";

type Handle = (req: IncomingMessage, res: ServerResponse, callback?: (err?: unknown) => void) => void;

/**
 * Serves a request for which `forwarded(req)` holds by running `chain` (what the router would run
 * for it), after what Express's `app.handle` sets up (the circular references, the prototypes behind
 * req.path, req.ip, res.status..., `res.locals`) and what the router sets before its first layer.
 */
export function forwardWithoutRouter(app: Express, forwarded: (req: Request) => boolean, chain: readonly RequestHandler[], onError: ErrorRequestHandler): void {
  const internals = app as unknown as { handle: Handle };
  const routed: Handle = internals.handle.bind(app);
  const run = inOrder(chain);
  internals.handle = (incoming, outgoing, callback) => {
    if (callback !== undefined) return routed(incoming, outgoing, callback);
    const req = incoming as Request;
    const res = outgoing as Response;
    req.res = res;
    res.req = req;
    Object.setPrototypeOf(req, app.request);
    Object.setPrototypeOf(res, app.response);
    if (!res.locals) res.locals = Object.create(null);
    // Express's own handle sets the same up again (harmlessly) and routes the request.
    if (!forwarded(req)) return routed(req, res);
    req.baseUrl = "";
    req.originalUrl = req.url;
    req.params = {};
    const failed = (err: unknown) => {
      try {
        onError(err, req, res, (passed: unknown) => setImmediate(finalHandler, app, req, res, passed));
      } catch (thrown) {
        setImmediate(finalHandler, app, req, res, thrown);
      }
    };
    // The forward always answers or fails; a handler that went on past it would, under Express, have
    // reached the layers after it, which answer a forwarded path with 404000.
    run(req, res, (err?: unknown) => failed(err ?? errors.routeNotFound()));
  };
}

/**
 * Express's final handler for what the error middleware passes on, which is only an error after the
 * answer has started (the envelope cannot be sent): logged as Express logs it, the connection cut.
 */
function finalHandler(app: Express, req: Request, res: Response, err: unknown): void {
  if (err && app.get("env") !== "test") console.error(err instanceof Error ? (err.stack ?? String(err)) : String(err));
  if (res.headersSent) req.socket?.destroy();
  else res.status(500).end();
}

/**
 * Handlers run one after the other as Express runs them as layers of their own: `next()` goes on,
 * `next(err)` leaves for the error handlers, and a rejected promise is `next(err)` (Express 5).
 */
function inOrder(handlers: readonly RequestHandler[]): RequestHandler {
  return (req, res, next) => {
    let i = 0;
    const step = (err?: unknown) => {
      if (err !== undefined && err !== null) return next(err);
      const handler = handlers[i++];
      if (!handler) return next();
      try {
        const returned: unknown = handler(req, res, step);
        if (returned instanceof Promise) returned.catch((error: unknown) => next(error ?? new Error("Rejected promise")));
      } catch (error) {
        next(error);
      }
    };
    step();
  };
}
