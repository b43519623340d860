// The gateway's own rate-limit middleware (docs/performance.md D6): what express-rate-limit's
// middleware does for the gateway's options (count, headers, refusal), with its headers exactly
// (X-RateLimit-*, draft-8 RateLimit / RateLimit-Policy, Retry-After on 429), in one continuation of
// the count. express-rate-limit's generic middleware awaits five times per request, builds its info
// object and the policy's name, and hashes the bucket's key for draft-8's `pk` on every request.
import { createHash } from "node:crypto";
import type { Request, RequestHandler, Response } from "express";
import type { Options, Store } from "express-rate-limit";

export interface CountingOptions {
  windowMs: number;
  /** The bucket's limit: fixed, or the request's (an API key's own). */
  limit: number | ((req: Request) => number);
  /** Counts that fail open themselves (FailOpenStore): a failed count is the window's first. */
  store: Store;
  key: (req: Request) => string;
  /** A refused request (429000, Retry-After set); `next` is the request's. */
  refuse: (next: (err?: unknown) => void) => void;
}

/** Most draft-8 policy values remembered (one per bucket seen); emptied when full. */
const POLICIES_MAX = 10_000;

export function countingMiddleware(options: CountingOptions): RequestHandler {
  // As express-rate-limit does: the store learns its window (the only option the gateway's stores read).
  options.store.init?.({ windowMs: options.windowMs } as Options);
  const windowSeconds = Math.ceil(options.windowMs / 1000);
  const duration = durationName(options.windowMs);
  /** RateLimit-Policy by limit and bucket: draft-8's `pk` is a hash of the bucket, made once per bucket. */
  const policies = new Map<string, string>();
  const policyOf = (limit: number, key: string): string => {
    const known = policies.get(`${limit} ${key}`);
    if (known !== undefined) return known;
    const policy = `"${limit}-in-${duration}"; q=${limit}; w=${windowSeconds}; pk=:${partitionKey(key)}:`;
    if (policies.size >= POLICIES_MAX) policies.clear();
    policies.set(`${limit} ${key}`, policy);
    return policy;
  };
  const resetSeconds = (resetTime: Date | undefined) => (resetTime ? Math.max(0, Math.ceil((resetTime.getTime() - Date.now()) / 1000)) : windowSeconds);

  const setHeaders = (res: Response, limit: number, key: string, totalHits: number, resetTime: Date | undefined) => {
    if (res.headersSent) return;
    const remaining = Math.max(limit - totalHits, 0);
    res.setHeader("X-RateLimit-Limit", String(limit));
    res.setHeader("X-RateLimit-Remaining", String(remaining));
    if (resetTime) res.setHeader("X-RateLimit-Reset", String(Math.ceil(resetTime.getTime() / 1000)));
    append(res, "RateLimit", `"${limit}-in-${duration}"; r=${remaining}; t=${resetSeconds(resetTime)}`);
    append(res, "RateLimit-Policy", policyOf(limit, key));
  };

  return (req, res, next) => {
    const key = options.key(req);
    Promise.resolve(options.store.increment(key)).then(({ totalHits, resetTime }) => {
      const limit = typeof options.limit === "function" ? options.limit(req) : options.limit;
      setHeaders(res, limit, key, totalHits, resetTime);
      if (totalHits <= limit) return next();
      if (!res.headersSent) res.setHeader("Retry-After", String(resetSeconds(resetTime)));
      options.refuse(next);
    }, next);
  };
}

/** express-rate-limit's draft-8 partition key: the first 12 hex digits of the key's SHA-256, in base64. */
function partitionKey(key: string): string {
  return Buffer.from(createHash("sha256").update(key).digest("hex").slice(0, 12)).toString("base64");
}

/** Express's res.append, without its get-concat-set for a header not set yet (the usual case). */
function append(res: Response, name: string, value: string): void {
  if (res.getHeader(name) === undefined) res.setHeader(name, value);
  else res.append(name, value);
}

/** express-rate-limit's names for a window: `30sec`, `1min`, `2hrs`, `1day`. */
function durationName(windowMs: number): string {
  const seconds = windowMs / 1000;
  const minutes = seconds / 60;
  const hours = minutes / 60;
  const days = hours / 24;
  if (seconds < 60) return `${seconds}sec`;
  if (minutes < 60) return `${minutes}min`;
  if (hours < 24) return `${hours}hr${hours > 1 ? "s" : ""}`;
  return `${days}day${days > 1 ? "s" : ""}`;
}
