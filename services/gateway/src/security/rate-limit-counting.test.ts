// D6 both ways (docs/performance.md): the gateway's own rate-limit middleware and express-rate-limit's,
// given the same counts, set the same headers and refuse the same requests.
import express, { type Request } from "express";
import { type IncrementResponse, type Options, rateLimit, type Store } from "express-rate-limit";
import supertest from "supertest";
import { countingMiddleware } from "./rate-limit-counting";

/** Counts in a window that resets at a fixed time, so both middlewares see the same answers. */
class FixedWindowCounts implements Store {
  windowMs = 0;
  private readonly hits = new Map<string, number>();
  constructor(private readonly resetTime: Date | undefined) {}
  init(options: Options): void {
    this.windowMs = options.windowMs;
  }
  async increment(key: string): Promise<IncrementResponse> {
    const totalHits = (this.hits.get(key) ?? 0) + 1;
    this.hits.set(key, totalHits);
    return { totalHits, resetTime: this.resetTime };
  }
  async decrement(): Promise<void> {}
  async resetKey(key: string): Promise<void> {
    this.hits.delete(key);
  }
}

type Way = "own" | "express-rate-limit";

function appWith(way: Way, windowMs: number, limit: number | ((req: Request) => number), store: Store) {
  const key = (req: Request) => `user:${String(req.headers["x-user"])}`;
  const refuse = (next: (err?: unknown) => void) => next(Object.assign(new Error("limited"), { limited: true }));
  const app = express();
  app.use(
    way === "own"
      ? countingMiddleware({ windowMs, limit, store, key, refuse })
      : rateLimit({ windowMs, limit, legacyHeaders: true, standardHeaders: "draft-8", store, keyGenerator: key, handler: (_req, _res, next) => refuse(next) }),
  );
  app.get("/", (_req, res) => void res.json({ ok: true }));
  app.use((err: { limited?: boolean }, _req: express.Request, res: express.Response, _next: express.NextFunction) => void res.status(err.limited ? 429 : 500).json({}));
  return app;
}

const RATE_HEADERS = ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit", "ratelimit-policy", "retry-after"];

/** Status and rate-limit headers of each request, users taking turns. */
async function answers(way: Way, windowMs: number, limit: number | ((req: Request) => number), resetTime: Date | undefined) {
  const app = appWith(way, windowMs, limit, new FixedWindowCounts(resetTime));
  const seen: Array<Record<string, unknown>> = [];
  for (const user of ["a", "a", "b", "a", "a", "b"]) {
    const res = await supertest(app).get("/").set("x-user", user);
    seen.push({ status: res.status, ...Object.fromEntries(RATE_HEADERS.map((name) => [name, res.headers[name]])) });
  }
  return seen;
}

describe("countingMiddleware (D6) against express-rate-limit", () => {
  // The clock stands still (only Date is faked: I/O and timers run as ever), so both ways read the same
  // "t=" and Retry-After however long a loaded machine takes between them.
  beforeEach(() =>
    jest.useFakeTimers({
      now: Date.now(),
      doNotFake: ["hrtime", "nextTick", "performance", "queueMicrotask", "setImmediate", "clearImmediate", "setInterval", "clearInterval", "setTimeout", "clearTimeout"],
    }),
  );
  afterEach(() => jest.useRealTimers());

  it.each([
    ["a fixed limit, 1 minute", 60_000, 3],
    ["a fixed limit, 2 hours", 2 * 3_600_000, 2],
    ["a limit per request, 30 seconds", 30_000, (req: Request) => (req.headers["x-user"] === "a" ? 2 : 5)],
  ] as const)("%s: the same headers and refusals", async (_name, windowMs, limit) => {
    const resetTime = new Date(Date.now() + 90_900);
    const own = await answers("own", windowMs, limit, resetTime);
    expect(own).toEqual(await answers("express-rate-limit", windowMs, limit, resetTime));
    expect(own.map((a) => a.status)).toContain(429);
    expect(own.find((a) => a.status === 429)?.["retry-after"]).toBeDefined();
  });

  it("a count without a reset time (a store that failed open) answers alike", async () => {
    expect(await answers("own", 60_000, 3, undefined)).toEqual(await answers("express-rate-limit", 60_000, 3, undefined));
  });
});
