import { randomUUID } from "node:crypto";
import type { RequestHandler } from "express";
import type { Logger } from "@crm/logger";
import type { Principal } from "@crm/contracts";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** From X-Request-Id when the caller sent a sane one, else generated. */
      requestId: string;
      /** The service logger with this request's id on every line. */
      log: Logger;
      /** Set by internal-token authentication on /api routes. */
      principal?: Principal;
    }
  }
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const REQUEST_ID_HEADER = "x-request-id";

/** Request id in, request id out, and a per-request logger; logs one line per finished request. */
export function requestContext(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const incoming = req.get(REQUEST_ID_HEADER);
    req.requestId = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    req.log = logger.child({ requestId: req.requestId });
    res.setHeader("X-Request-Id", req.requestId);
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const line = { method: req.method, path: req.path, status: res.statusCode, ms: Math.round(ms * 10) / 10 };
      if (res.statusCode >= 500) req.log.error(line, "request failed");
      else req.log.info(line, "request");
    });
    next();
  };
}
