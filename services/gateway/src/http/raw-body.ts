import express, { type NextFunction, type Request, type RequestHandler } from "express";
import { bodyReadError, errors } from "@crm/errors";
import { BODY_LIMIT_BYTES, readDeclaredLengthBody } from "@crm/service-kit";

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json$/i;

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The exact request body bytes, forwarded unchanged; undefined when there is none. */
      rawBody?: Buffer;
    }
  }
}

const readRaw = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES });

/**
 * The common body: a Content-Length within the limit, not compressed, not chunked. Read straight
 * off the stream: body-parser's general path (type check, raw-body's stream plumbing, debug calls,
 * on-finished) was ~4% of the gateway's CPU per POST. Whatever else comes (compressed, chunked, too
 * large) goes through body-parser as before, so its answers stay as they were.
 */
function isPlainSizedBody(req: Request): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return false;
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return false;
  return Number(req.headers["content-length"]) <= BODY_LIMIT_BYTES;
}

/** An interrupted body is answered as body-parser answers it (its `request.aborted` is mapped by the error middleware). */
const unreadable = () => errors.validationFailed([{ path: "body", message: "Request body could not be read" }]);

function readPlain(req: Request, next: NextFunction): void {
  readDeclaredLengthBody(req, (bytes) => {
    if (bytes === undefined) return next(unreadable());
    req.body = bytes;
    next();
  });
}

/**
 * Reads the body once as bytes (413000 over 1 MiB), refuses non-JSON media types (415000) and
 * malformed JSON (400002) at the edge, and keeps the bytes to forward as they came.
 */
export const rawJsonBody: RequestHandler[] = [
  (req, res, next) => {
    const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    if (!hasBody) return next();
    if (isPlainSizedBody(req)) readPlain(req, next);
    else readRaw(req, res, (err?: unknown) => next(err === undefined ? undefined : bodyReadError(err)));
  },
  (req, _res, next) => {
    if (!Buffer.isBuffer(req.body) || req.body.length === 0) {
      req.body = undefined;
      return next();
    }
    const type = String(req.headers["content-type"] ?? "")
      .split(";")[0]!
      .trim();
    if (!JSON_TYPE.test(type)) return next(errors.unsupportedMediaType());
    const raw: Buffer = req.body;
    try {
      JSON.parse(raw.toString("utf8"));
    } catch {
      return next(errors.malformedJson());
    }
    req.rawBody = raw;
    req.body = undefined;
    next();
  },
];
