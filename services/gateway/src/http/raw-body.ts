import express, { type RequestHandler } from "express";
import { bodyReadError, errors } from "@crm/errors";
import { BODY_LIMIT_BYTES } from "@crm/service-kit";

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

/** body-parser's raw reader for every media type (inflating gzip, deflate, br), bounded at 1 MiB. */
const readRaw = express.raw({ type: () => true, limit: BODY_LIMIT_BYTES });

/**
 * Reads the body once as bytes (413000 over 1 MiB), refuses non-JSON media types (415000) and
 * malformed JSON (400002) at the edge, and keeps the bytes to forward as they came.
 */
export const rawJsonBody: RequestHandler[] = [
  (req, res, next) => readRaw(req, res, (err?: unknown) => next(err === undefined ? undefined : bodyReadError(err))),
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
