// Forwards a public request to the service that owns it, over a keep-alive pool per service, with
// the internal token that names the caller; in the single process, by calling the service's app
// with the same request instead (in-process.ts). The service's answer is passed back unchanged, up to
// `maxResponseBytes`: undici stops reading beyond it, so one huge answer cannot grow the gateway's
// memory; the caller gets 500000 (see the README's Limits) and the cause is logged.
import type { Dispatcher, Pool as PoolType } from "undici";
import type { Request } from "express";
import { INTERNAL_TOKEN_HEADER, type Principal } from "@crm/contracts";
import { type AppError, errors, OUTCOME_IN_DOUBT_HEADER } from "@crm/errors";
import type { InProcessHandler } from "@crm/service-kit";
import { dispatchInProcess, InProcessTooLarge } from "./in-process";
import { InternalTokens } from "./internal-tokens";
import type { RouteMatch, ServiceName } from "./route-table";
import { Pool, undiciErrors, undiciUtil } from "./undici-pool";
import { safeToRepeat, type Upstream, UpstreamPool } from "./upstream-pool";

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
  /**
   * The service's 503000 answers a write whose outcome is in doubt (its OUTCOME_IN_DOUBT_HEADER, an
   * internal header the client never sees): the Idempotency-Key must not be freed for a second run.
   */
  outcomeInDoubt?: true;
}

/** Request headers a service may need; everything else (credentials included) stays at the edge. */
const FORWARDED_REQUEST_HEADERS = ["content-type", "accept", "accept-language", "cookie", "user-agent", "if-match", "if-none-match", "idempotency-key"];
/** Response headers passed back to the client (never an internal one such as OUTCOME_IN_DOUBT_HEADER). */
const PASSED_RESPONSE_HEADERS = new Set(["content-type", "set-cookie", "location", "cache-control", "etag", "retry-after", "idempotent-replayed"]);

/** The service announced an answer larger than the gateway relays; it is not read. */
class DeclaredTooLarge extends Error {
  constructor(readonly declaredLength: number) {
    super("answer larger than UPSTREAM_MAX_RESPONSE_BYTES");
  }
}

/** The answer failed after its headers came (its body broke off): passed on as it is, not as 503000. */
class AnswerBroken extends Error {
  constructor(override readonly cause: unknown) {
    super("answer broken off");
  }
}

/** A service's whole answer, as either way of asking undici gives it. */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body(): Buffer;
}

/** How one exchange with a service's pool is made: undici's dispatch interface (D10) or its `request()`. */
type Exchange = (pool: PoolType, request: Dispatcher.DispatchOptions, maxBytes: number) => Promise<Answer>;

/**
 * A service's answer collected into one buffer, as undici's dispatcher hands it over: what
 * `request()` did minus the readable stream, async resource and body mixin it builds per request
 * only for the gateway to read it to the end at once (docs/performance.md D10).
 */
class CollectedAnswer implements Dispatcher.DispatchHandler {
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  private readonly chunks: Buffer[] = [];
  private abort: ((err?: Error) => void) | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly resolve: (answer: CollectedAnswer) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[]): boolean {
    if (statusCode < 200) return true;
    this.status = statusCode;
    this.headers = undiciUtil.parseHeaders(rawHeaders);
    const declaredLength = Number(this.headers["content-length"]);
    if (declaredLength > this.maxBytes) {
      this.abort?.(new DeclaredTooLarge(declaredLength));
      return false;
    }
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    this.resolve(this);
  }

  onError(err: Error): void {
    this.reject(this.status === 0 || err instanceof DeclaredTooLarge || err instanceof undiciErrors.ResponseExceededMaxSizeError ? err : new AnswerBroken(err));
  }

  body(): Buffer {
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
  }
}

const dispatched: Exchange = (pool, request, maxBytes) =>
  new Promise<CollectedAnswer>((resolve, reject) => {
    pool.dispatch(request, new CollectedAnswer(maxBytes, resolve, reject));
  });

/** UNDICI_DISPATCH=false: undici's `request()`, its body read whole; the same errors as CollectedAnswer's. */
const requested: Exchange = async (pool, request, maxBytes) => {
  const res = await pool.request(request);
  const declaredLength = Number(res.headers["content-length"]);
  if (declaredLength > maxBytes) {
    res.body.destroy();
    throw new DeclaredTooLarge(declaredLength);
  }
  let body: Buffer;
  try {
    body = Buffer.from(await res.body.arrayBuffer());
  } catch (err) {
    throw err instanceof undiciErrors.ResponseExceededMaxSizeError ? err : new AnswerBroken(err);
  }
  return { status: res.statusCode, headers: res.headers, body: () => body };
};

export interface ForwarderOptions {
  /** Each service's base URL, or its replicas' (upstream-pool.ts). */
  services: Record<Exclude<ServiceName, "gateway">, Upstream>;
  /**
   * Services running in this process (the single process), reached by calling their app rather than
   * over loopback HTTP (in-process.ts); the others, and every health check, go over HTTP.
   */
  inProcess?: Partial<Record<Exclude<ServiceName, "gateway">, InProcessHandler>>;
  /** FORWARD_IN_PROCESS: `inProcess` used (D11, in-process.ts); false forwards over loopback HTTP. On when omitted. */
  forwardInProcess?: boolean;
  internalTokenSecret: string;
  timeoutMs: number;
  /** Largest answer body the gateway buffers from a service (UPSTREAM_MAX_RESPONSE_BYTES). */
  maxResponseBytes: number;
  /** INTERNAL_TOKEN_REUSE: one signed token per caller and second (D9, internal-tokens.ts); on when omitted. */
  reuseInternalTokens?: boolean;
  /** UNDICI_DISPATCH: exchanges on undici's dispatch interface (D10, CollectedAnswer); false: its `request()`. On when omitted. */
  undiciDispatch?: boolean;
  /** Epoch ms for the internal tokens' `iat`: Date.now unless a test moves time itself. */
  clock?: () => number;
}

/** The answer's headers the client gets (PASSED_RESPONSE_HEADERS). */
function passedHeaders(answered: Readonly<Record<string, string | string[] | undefined>>): Record<string, string | string[]> {
  const passed: Record<string, string | string[]> = {};
  for (const name in answered) {
    const value = answered[name];
    if (value !== undefined && PASSED_RESPONSE_HEADERS.has(name)) passed[name] = value;
  }
  return passed;
}

/** What the service's internal headers say of its write, for the gateway alone. */
function outcomeOf(answered: Readonly<Record<string, string | string[] | undefined>>): { outcomeInDoubt?: true } {
  return answered[OUTCOME_IN_DOUBT_HEADER] !== undefined ? { outcomeInDoubt: true } : {};
}

/** Connections per service replica for requests that answer as soon as they can: past it they queue. */
const CONNECTIONS_PER_REPLICA = 64;

export class Forwarder {
  private readonly pools: PoolType[] = [];
  private readonly upstreams = new Map<string, UpstreamPool<PoolType>>();
  /**
   * The same replicas for routes that hold their answer by design (the change feed's `wait`), over
   * pools of their own without a connection cap: a waiting request keeps its connection for up to
   * 30 s, and in the shared pool 64 waiting followers took every connection, so every other request to
   * that service queued behind them. One connection per waiting request, as any proxy gives it.
   */
  private readonly waitingUpstreams = new Map<string, UpstreamPool<PoolType>>();
  private readonly tokens: InternalTokens;
  private readonly exchange: Exchange;

  constructor(private readonly options: ForwarderOptions) {
    this.exchange = options.undiciDispatch === false ? requested : dispatched;
    if (options.forwardInProcess === false) this.options = { ...options, inProcess: undefined };
    this.tokens = new InternalTokens(options.internalTokenSecret, options.reuseInternalTokens ?? true, options.clock);
    const poolOf = (connections: number | null) => (url: string) => {
      const pool = new Pool(url, { connections, pipelining: 1, keepAliveTimeout: 30_000, maxResponseSize: options.maxResponseBytes });
      this.pools.push(pool);
      return pool;
    };
    for (const [service, upstream] of Object.entries(options.services)) {
      this.upstreams.set(service, new UpstreamPool(upstream, poolOf(CONNECTIONS_PER_REPLICA)));
      this.waitingUpstreams.set(service, new UpstreamPool(upstream, poolOf(null)));
    }
  }

  /**
   * `traceHeaders`: W3C `traceparent` / `tracestate` naming the gateway's span (or the caller's, tracing off).
   * `gatewayHeaders`: internal headers the gateway composed for this request (never a client's).
   */
  async forward(
    service: Exclude<ServiceName, "gateway">,
    req: Request,
    principal: Principal | undefined,
    traceHeaders?: Readonly<Record<string, string>>,
    gatewayHeaders?: Readonly<Record<string, string>>,
  ): Promise<UpstreamResponse> {
    const headers: Record<string, string> = {
      // The caller was authenticated for this request already; the token only carries who it is (the
      // request id travels in X-Request-Id). A service remembers a token it verified until it expires.
      [INTERNAL_TOKEN_HEADER]: this.tokens.for(principal),
      "x-request-id": req.requestId,
      "x-forwarded-for": req.ip ?? "",
      "x-forwarded-proto": req.protocol,
    };
    for (const name of FORWARDED_REQUEST_HEADERS) {
      const value = req.headers[name];
      if (typeof value === "string") headers[name] = value;
    }
    if (traceHeaders) Object.assign(headers, traceHeaders);
    if (gatewayHeaders) Object.assign(headers, gatewayHeaders);
    if (req.rawBody) headers["content-length"] = String(req.rawBody.length);
    // A route whose service holds answers by design (the change feed's wait) gets that much longer, and its own pools.
    const route = req.res?.locals.route as RouteMatch | undefined;
    const waitsUpToMs = route?.waitsUpToMs ?? 0;
    const timeoutMs = this.options.timeoutMs + waitsUpToMs;
    const local = this.options.inProcess?.[service];
    if (local) {
      try {
        const {
          status,
          headers: answered,
          body,
        } = await dispatchInProcess(local, { method: req.method, path: req.originalUrl, headers, body: req.rawBody }, { timeoutMs, maxBytes: this.options.maxResponseBytes });
        return { status, headers: passedHeaders(answered), body, ...outcomeOf(answered) };
      } catch (err) {
        if (err instanceof InProcessTooLarge) throw this.tooLarge(service, req, err.declaredLength);
        throw errors.unavailable(undefined, { cause: err });
      }
    }
    let answer: Answer;
    try {
      answer = await (waitsUpToMs > 0 ? this.waitingUpstreams : this.upstreams)
        .get(service)!
        .send(safeToRepeat(req.method, req.headers, route?.keyClaimedByService), (pool) =>
          this.exchange(
            pool,
            { method: req.method as Dispatcher.HttpMethod, path: req.originalUrl, headers, body: req.rawBody, headersTimeout: timeoutMs, bodyTimeout: timeoutMs },
            this.options.maxResponseBytes,
          ),
        );
    } catch (err) {
      if (err instanceof DeclaredTooLarge) throw this.tooLarge(service, req, err.declaredLength);
      if (err instanceof undiciErrors.ResponseExceededMaxSizeError) throw this.tooLarge(service, req, undefined);
      // No answer at all (refused, reset, timed out before the headers): the service is unavailable.
      if (!(err instanceof AnswerBroken)) throw errors.unavailable(undefined, { cause: err });
      throw err.cause;
    }
    return { status: answer.status, headers: passedHeaders(answer.headers), body: answer.body(), ...outcomeOf(answer.headers) };
  }

  /**
   * A GET of one of `service`'s internal endpoints as `principal`, for an answer the gateway composes
   * itself (the audit log's merge): the same in-process call or pool as forwarded requests. No answer
   * at all is 503000.
   */
  async ask(service: Exclude<ServiceName, "gateway">, path: string, principal: Principal, requestId: string): Promise<UpstreamResponse> {
    const headers: Record<string, string> = { [INTERNAL_TOKEN_HEADER]: this.tokens.for(principal), "x-request-id": requestId };
    const { timeoutMs, maxResponseBytes: maxBytes } = this.options;
    try {
      const local = this.options.inProcess?.[service];
      if (local) {
        const answer = await dispatchInProcess(local, { method: "GET", path, headers, body: undefined }, { timeoutMs, maxBytes });
        return { status: answer.status, headers: {}, body: answer.body };
      }
      const answer = await this.upstreams
        .get(service)!
        .send(true, (pool) => this.exchange(pool, { method: "GET", path, headers, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }, maxBytes));
      return { status: answer.status, headers: {}, body: answer.body() };
    } catch (err) {
      throw errors.unavailable(undefined, { cause: err });
    }
  }

  /**
   * 500000, not 503000: the service is up and answered; the answer is beyond what the gateway is
   * built to relay, and the same request would be refused again, so nothing invites a retry.
   * The caller's remedy is a smaller page or fewer relations.
   */
  private tooLarge(service: string, req: Request, declaredLength: number | undefined): AppError {
    (req.log ?? console).error(
      { service, path: req.originalUrl, limitBytes: this.options.maxResponseBytes, ...(declaredLength !== undefined ? { contentLength: declaredLength } : {}) },
      "service answer larger than UPSTREAM_MAX_RESPONSE_BYTES: not relayed, answered 500000",
    );
    return errors.internal();
  }

  /** Readiness: the `/healthz` of one of the service's replicas answers 200, over the pools requests go through. */
  async checkHealth(service: Exclude<ServiceName, "gateway">): Promise<void> {
    await this.upstreams.get(service)!.any(async (pool) => {
      const res = await pool.request({ method: "GET", path: "/healthz", headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${service} answered ${res.statusCode}`);
    });
  }

  async close(): Promise<void> {
    await Promise.all(this.pools.map((p) => p.close()));
  }
}
