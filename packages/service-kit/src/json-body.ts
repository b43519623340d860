import express, { type RequestHandler } from "express";
import { bodyReadError, errors } from "@crm/errors";
import { nulTextDetails } from "./nul-text";

export const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json$/i;

/**
 * JSON bodies only: a body with another media type is 415000, malformed JSON 400002, over 1 MiB
 * 413000, a body that cannot be read or decompressed 400001 (bodyReadError), a NUL character in any string or key
 * 400001 naming each field (see nul-text.ts). Bodiless requests pass through.
 */
export function jsonBody(): RequestHandler[] {
  const guard: RequestHandler = (req, _res, next) => {
    const hasBody = req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
    if (!hasBody) return next();
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
    if (!JSON_TYPE.test(type)) return next(errors.unsupportedMediaType());
    next();
  };
  const noNulText: RequestHandler = (req, _res, next) => {
    const details = req.body === undefined ? [] : nulTextDetails(req.body);
    next(details.length > 0 ? errors.validationFailed(details) : undefined);
  };
  const parse = express.json({
    limit: BODY_LIMIT_BYTES,
    strict: false,
    type: (req) =>
      JSON_TYPE.test(
        String(req.headers["content-type"] ?? "")
          .split(";")[0]!
          .trim(),
      ),
  });
  const readJson: RequestHandler = (req, res, next) => parse(req, res, (err?: unknown) => next(err === undefined ? undefined : bodyReadError(err)));
  return [guard, readJson, noNulText];
}
