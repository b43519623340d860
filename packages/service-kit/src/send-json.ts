import type { Request, Response } from "express";

/**
 * `res.status(status).json(value)` for an answer Express would send as it is: not GET or HEAD (so no
 * freshness check and no 304), an ETag already set (so none to hash), no Content-Type of its own, a
 * status with a body. The bytes and headers are the ones Express sends (`application/json;
 * charset=utf-8`, Content-Length); what it skips is res.json/res.send's general path (settings
 * lookups, media-type and charset parsing, a freshness check that cannot apply), a measurable share of
 * a record write's CPU. Any other answer goes through Express unchanged.
 */
export function sendJson(req: Request, res: Response, status: number, value: unknown): void {
  const direct =
    req.method !== "GET" &&
    req.method !== "HEAD" &&
    status !== 204 &&
    status !== 205 &&
    status !== 304 &&
    res.getHeader("etag") !== undefined &&
    res.getHeader("content-type") === undefined;
  const body = direct ? (JSON.stringify(value) as string | undefined) : undefined;
  if (body === undefined) {
    res.status(status).json(value);
    return;
  }
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.setHeader("Content-Length", String(Buffer.byteLength(body, "utf8")));
  res.end(body, "utf8");
}
