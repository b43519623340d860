import express, { type NextFunction, type Request, type RequestHandler } from "express";
import { bodyReadError, errors } from "@crm/errors";
import { readDeclaredLengthBody } from "./declared-length-body";
import { unstorableTextDetails } from "./unstorable-text";

export const BODY_LIMIT_BYTES = 1024 * 1024;

const JSON_TYPE = /^application\/([a-z0-9.+-]*\+)?json$/i;

/** A JSON media type with no parameter but `charset=utf-8`, the default body-parser assumes anyway. */
const PLAIN_JSON_TYPE = /^\s*application\/([a-z0-9.+-]*\+)?json\s*(;\s*charset=utf-8\s*)?$/i;

const typeOf = (req: { headers: Request["headers"] }) =>
  String(req.headers["content-type"] ?? "")
    .split(";")[0]!
    .trim();

/**
 * JSON bodies only: a body with another media type is 415000, malformed JSON 400002, over 1 MiB
 * 413000, a body that cannot be read or decompressed 400001 (bodyReadError), a NUL character in any string or key
 * 400001 naming each field (see unstorable-text.ts). Bodiless requests pass through.
 *
 * The common body (a JSON type in UTF-8, a Content-Length within the limit, not compressed, not
 * chunked) is read straight off the stream and parsed once: body-parser's general path (charset and
 * type parsing, raw-body's stream plumbing, iconv, debug calls, on-finished) cost more per create than
 * the parse itself. Everything else goes through `express.json` as before, so its answers are its own.
 * `offTheStream` false (JSON_BODY_OFF_THE_STREAM=false, docs/performance.md D4): every body through `express.json`.
 */
export function jsonBody(offTheStream = true): RequestHandler[] {
  const parse = express.json({ limit: BODY_LIMIT_BYTES, strict: false, type: (req) => JSON_TYPE.test(typeOf(req)) });
  const general = (req: Request, res: Parameters<RequestHandler>[1], next: NextFunction) =>
    parse(req, res, (err?: unknown) => (err === undefined ? checkUnstorableText(req, next) : next(bodyReadError(err))));
  const read: RequestHandler = (req, res, next) => {
    const length = req.headers["content-length"];
    if (req.headers["transfer-encoding"] === undefined && length === undefined) {
      req.body = undefined;
      return next();
    }
    const hasBody = req.headers["transfer-encoding"] !== undefined || Number(length ?? 0) > 0;
    if (hasBody && !JSON_TYPE.test(typeOf(req))) return next(errors.unsupportedMediaType());
    if (hasBody && offTheStream && isPlainJsonBody(req)) readPlain(req, next);
    else general(req, res, next);
  };
  return [read];
}

function isPlainJsonBody(req: Request): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return false;
  const encoding = req.headers["content-encoding"];
  if (encoding !== undefined && encoding.toLowerCase() !== "identity") return false;
  if (!PLAIN_JSON_TYPE.test(req.headers["content-type"] ?? "")) return false;
  const length = Number(req.headers["content-length"]);
  return length > 0 && length <= BODY_LIMIT_BYTES;
}

function checkUnstorableText(req: Request, next: NextFunction): void {
  const details = req.body === undefined ? [] : unstorableTextDetails(req.body);
  next(details.length > 0 ? errors.validationFailed(details) : undefined);
}

/** A body that ends before its Content-Length: answered as body-parser answers an aborted request. */
const unreadable = () => bodyReadError({ type: "request.aborted" });

function readPlain(req: Request, next: NextFunction): void {
  readDeclaredLengthBody(req, (bytes) => {
    if (bytes === undefined) return next(unreadable());
    // As body-parser decodes UTF-8 (iconv-lite): a leading byte order mark is not part of the text.
    let text = bytes.toString("utf8");
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    try {
      req.body = text.length === 0 ? {} : JSON.parse(text);
    } catch {
      return next(errors.malformedJson());
    }
    checkUnstorableText(req, next);
  });
}
