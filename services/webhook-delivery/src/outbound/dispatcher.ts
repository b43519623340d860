import { performance } from "node:perf_hooks";
import { TextDecoder } from "node:util";
import { Agent, type Dispatcher as UndiciDispatcher, errors } from "undici";
import { cachingResolver } from "./host-resolver";
import { createGuardedConnector, systemResolver, TargetNotAllowedError } from "./guarded-connector";
import { RequestedExchange } from "./requested-exchange";

/** What one HTTP attempt produced, ready to be stored on the delivery record. */
export interface AttemptOutcome {
  /** A 2xx answer, complete (up to the body cap), within the time-out. */
  ok: boolean;
  /** HTTP status of the answer; 0 when no complete HTTP answer came (refused, DNS, reset, time-out). */
  responseStatus: number;
  /** First characters of the answer's body, or the error text when responseStatus is 0. */
  responseBody: string;
  durationMs: number;
  /** Why no HTTP answer came (responseStatus 0), for metrics: a time-out, the SSRF guard, or anything else. */
  failure?: "timeout" | "refused" | "network_error";
  /**
   * For operators only (logs, never the delivery log): what `responseBody` words generically, such as the
   * internal address a refused name resolved to or the resolver's code (TARGET_UNREACHABLE_MESSAGE).
   */
  detail?: string;
}

/**
 * responseBody of an attempt whose host did not resolve, or resolved to (or is) an address deliveries may
 * not reach (issue 35 item 12). One text for both, with neither the address nor the resolver's code: the
 * delivery log is the tenant's, and telling "no such name" from "a name of the internal network"
 * would let a tenant map that network through webhook URLs. The detail goes to the logs.
 */
export const TARGET_UNREACHABLE_MESSAGE = "Target address is not allowed or could not be resolved";

export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  /** Sent as is (the signed bytes are the bytes sent): the text, or its UTF-8 bytes. */
  body: string | Buffer;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a host name to every address; family 0 means any. Injectable so tests need no real DNS. */
export type HostResolver = (hostname: string, family: 0 | 4 | 6) => Promise<ResolvedAddress[]>;

export interface DispatcherOptions {
  /** WEBHOOK_TIMEOUT_MS: bound on the whole exchange (DNS, connect, headers and body). */
  timeoutMs: number;
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: skip the SSRF address check (tests, on-prem). */
  allowPrivateTargets: boolean;
  /** Pooled keep-alive connections per origin (default 32). */
  maxConnectionsPerOrigin?: number;
  /** Characters of the response body kept (default 4096, decisions §6). */
  maxResponseBodyChars?: number;
  resolveHost?: HostResolver;
  /** Extra CA certificates (PEM) trusted besides the public roots, for on-prem receivers behind a private CA. */
  trustedCaCertificates?: readonly string[];
  /** UNDICI_DISPATCH: exchanges on undici's dispatch interface (D10, Exchange); false: its `request()`. On when omitted. */
  undiciDispatch?: boolean;
}

export interface Dispatcher {
  /** Performs one attempt. Never rejects: every failure becomes an outcome with responseStatus 0. */
  send(request: DeliveryRequest): Promise<AttemptOutcome>;
  /** Closes pooled connections once in-flight attempts have finished. */
  close(): Promise<void>;
}

export const DEFAULT_MAX_RESPONSE_BODY_CHARS = 4096;
// Above the per-business in-flight cap (20), so a business whose webhooks share one receiver origin
// can use all its slots: with 16, one process at a receiver answering in 50 ms stopped at ~300 /s.
const DEFAULT_MAX_CONNECTIONS_PER_ORIGIN = 32;
// Answers are reused briefly (getaddrinfo gives no TTL) and never trusted: each is checked again.
const DNS_CACHE_TTL_MS = 10_000;
const DNS_CACHE_ENTRIES = 1_000;
const DNS_TIMEOUT_MS = 5_000;
// Error texts are stored too; a bound keeps a pathological message from bloating the record.
const MAX_ERROR_TEXT_CHARS = 500;

/** Marks the abort of our own whole-exchange timer, to tell it apart from any other failure. */
class DeliveryTimeoutError extends Error {
  constructor(timeoutMs: number) {
    super(`Timed out after ${timeoutMs} ms`);
    this.name = "DeliveryTimeoutError";
  }
}

// Duck-typed on purpose: errors raised by node core may come from another realm (a vm context such
// as jest's), where `instanceof Error` / `instanceof AggregateError` is false.
function errorCode(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const { code, errors } = err as { code?: unknown; errors?: unknown };
  if (typeof code === "string") return code;
  // With several addresses node's happy-eyeballs reports an AggregateError of the per-address errors.
  if (Array.isArray(errors)) return errorCode(errors[0]);
  return undefined;
}

function errorMessage(err: unknown): string {
  if (typeof err === "object" && err !== null && typeof (err as { message?: unknown }).message === "string") {
    return (err as { message: string }).message;
  }
  return String(err);
}

const TIMEOUT_CODES = new Set(["UND_ERR_CONNECT_TIMEOUT", "UND_ERR_HEADERS_TIMEOUT", "UND_ERR_BODY_TIMEOUT"]);
const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NONAME", "ENODATA", "ESERVFAIL"]);
const RESET_CODES = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET", "ECONNABORTED"]);

/** Whether `err` says the target's name did not resolve or its address is refused (TARGET_UNREACHABLE_MESSAGE). */
function isUnreachableTarget(err: unknown): boolean {
  if (err instanceof TargetNotAllowedError) return true;
  const code = errorCode(err);
  return code === "ERR_WEBHOOK_TARGET_NOT_ALLOWED" || (code !== undefined && DNS_CODES.has(code));
}

/** A short, stable text for operators; receivers' owners read it (or its generic form) to fix their endpoint. */
function describeFailure(err: unknown, hostname: string, timeoutMs: number): string {
  if (err instanceof TargetNotAllowedError) return err.message;
  if (err instanceof DeliveryTimeoutError) return err.message;
  const code = errorCode(err);
  if (code !== undefined) {
    if (TIMEOUT_CODES.has(code)) return `Timed out after ${timeoutMs} ms`;
    if (DNS_CODES.has(code)) return `DNS lookup failed for ${hostname} (${code})`;
    if (code === "ECONNREFUSED") return "Connection refused";
    if (RESET_CODES.has(code)) return "Connection reset";
    if (code === "ETIMEDOUT") return "Connection timed out";
    if (code === "EHOSTUNREACH" || code === "ENETUNREACH") return "Host unreachable";
    if (code === "UND_ERR_HEADERS_OVERFLOW") return "Response headers too large";
    if (code.startsWith("HPE_") || code === "UND_ERR_RESPONSE") return "Invalid HTTP response";
  }
  const message = errorMessage(err);
  if (code !== undefined && /TLS|SSL|CERT/.test(code)) return `TLS error: ${message}`;
  return `Request failed: ${message}`;
}

function failureKind(err: unknown): AttemptOutcome["failure"] {
  if (err instanceof TargetNotAllowedError) return "refused";
  if (err instanceof DeliveryTimeoutError) return "timeout";
  const code = errorCode(err);
  if (code === "ERR_WEBHOOK_TARGET_NOT_ALLOWED") return "refused";
  if (code !== undefined && (TIMEOUT_CODES.has(code) || code === "ETIMEDOUT")) return "timeout";
  return "network_error";
}

/**
 * Makes stored text safe and bounded: at most `max` UTF-16 units without splitting a surrogate
 * pair, and no NUL characters (PostgreSQL text columns reject U+0000).
 */
function clip(text: string, max: number): string {
  let clipped = text.length > max ? text.slice(0, max) : text;
  const last = clipped.charCodeAt(clipped.length - 1);
  if (text.length > max && last >= 0xd800 && last <= 0xdbff) clipped = clipped.slice(0, -1);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what must not be stored.
  return clipped.replace(/\u0000/g, "\uFFFD");
}

/** Where one webhook URL sends, parsed once: undici's origin and path, and its credentials as a header. */
interface Target {
  origin: string;
  /** Path and query; the fragment is never sent. */
  path: string;
  hostname: string;
  authorization: string | undefined;
}

// Parsed URLs remembered, the oldest forgotten first: a webhook's attempts parse its URL once.
const TARGET_CACHE_ENTRIES = 1_000;

function parseTarget(text: string): Target | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  // The origin never carries the credentials; they go as a header.
  return { origin: url.origin, path: url.pathname + url.search, hostname: url.hostname, authorization: basicAuthorization(url) };
}

/**
 * The answer's body is decoded once, whole, when it ends (or reaches the cap): a non-streaming decode
 * takes Node's UTF-8 fast path, where a streaming TextDecoder (one per answer, since a chunk may end
 * inside a character) built an ICU converter for every answer: 1.7% of webhook-delivery's profile
 * samples, ~2 µs per answer (docs/performance.md). Same WHATWG decoding (a leading BOM dropped,
 * invalid bytes replaced), and a non-streaming decoder keeps no state, so one serves every answer.
 */
const utf8 = new TextDecoder("utf-8");

/**
 * One exchange on undici's dispatch interface: no AbortController, no response stream and no parsed
 * response headers (the outcome needs the status and the body's first characters only), which were
 * a tenth of webhook-delivery's CPU per delivery through undici's `request` (docs/performance.md).
 * The body is kept up to `maxBytes`, then the exchange is aborted (which also drops the now unusable
 * connection), so a receiver streaming an endless body costs one chunk beyond the cap, not unbounded
 * memory. Settles once, with the first of: the body's end, the cap, an error.
 *
 * It implements the handler methods undici's HTTP/1 client calls itself (onConnect, onHeaders, onData,
 * onComplete, onError), as the gateway's forwarder does: a handler with the newer onRequestStart /
 * onResponseStart methods is wrapped per request (UnwrapHandler), which builds a controller and parses
 * the answer's raw headers and trailers into objects only to hand them to methods that ignore them.
 * undici 7's types mark these methods deprecated; they are still what its client calls. Should a major
 * version of undici call the newer ones itself, this handler should implement those instead.
 */
class Exchange implements UndiciDispatcher.DispatchHandler {
  status: number | undefined;
  /** Set by our whole-exchange timer: every later error is reported as this time-out. */
  timedOut: DeliveryTimeoutError | undefined;
  private abort: ((err?: Error) => void) | undefined;
  /** The body's chunks as undici hands them over (each its own memory), and their length in bytes. */
  private chunks: Buffer[] = [];
  private bytes = 0;
  private settled = false;

  constructor(
    private readonly maxBytes: number,
    private readonly settle: (status: number | undefined, text: string | undefined, err: unknown) => void,
  ) {}

  /** The whole-exchange time-out: aborts the request now, or as soon as it reaches a connection. */
  timeOut(err: DeliveryTimeoutError): void {
    this.timedOut = err;
    this.abort?.(err);
  }

  onConnect(abort: (err?: Error) => void): void {
    this.abort = abort;
    if (this.timedOut) abort(this.timedOut);
  }

  onHeaders(statusCode: number): boolean {
    // 1xx answers are informational; the final answer follows on the same exchange.
    if (statusCode >= 200) this.status = statusCode;
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.settled) return true;
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    if (this.bytes >= this.maxBytes) {
      this.finish(this.status, this.text(), undefined);
      // Outside the parser's callback, as when the response stream used to be destroyed.
      const abort = this.abort;
      queueMicrotask(() => abort?.(new errors.RequestAbortedError()));
    }
    return true;
  }

  onComplete(): void {
    this.finish(this.status, this.text(), undefined);
  }

  onError(err: Error): void {
    this.finish(this.status, undefined, this.timedOut ?? err);
  }

  private text(): string {
    const { chunks } = this;
    if (chunks.length === 0) return "";
    return utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, this.bytes));
  }

  private finish(status: number | undefined, text: string | undefined, err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.chunks = [];
    this.settle(status, text, err);
  }
}

/** Credentials in a webhook URL are sent the way curl does, as HTTP Basic; undici would drop them. */
function basicAuthorization(url: URL): string | undefined {
  if (url.username === "" && url.password === "") return undefined;
  const decode = (part: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      return part;
    }
  };
  return "Basic " + Buffer.from(`${decode(url.username)}:${decode(url.password)}`, "utf8").toString("base64");
}

export function createDispatcher(options: DispatcherOptions): Dispatcher {
  const { timeoutMs, allowPrivateTargets } = options;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`timeoutMs must be > 0, got ${timeoutMs}`);
  const maxChars = options.maxResponseBodyChars ?? DEFAULT_MAX_RESPONSE_BODY_CHARS;
  // A UTF-16 unit comes from at most 3 bytes of UTF-8 (a 4-byte sequence gives 2; an invalid byte 1),
  // so this many bytes hold more than maxChars characters even if the last sequence is cut off.
  const maxBodyBytes = 4 * maxChars;
  const viaDispatch = options.undiciDispatch ?? true;

  // One pooled keep-alive agent for every delivery: repeated deliveries to a receiver reuse
  // connections instead of paying DNS + TCP + TLS each time.
  const agent = new Agent({
    connections: options.maxConnectionsPerOrigin ?? DEFAULT_MAX_CONNECTIONS_PER_ORIGIN,
    // Per-phase bounds; the whole-exchange timer in send() is what enforces the total.
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    connect: createGuardedConnector({
      timeoutMs,
      allowPrivateTargets,
      // Injected resolvers (tests) are used as they are; the system one gets a time-out and a cache.
      resolveHost:
        options.resolveHost ?? cachingResolver(systemResolver, { ttlMs: DNS_CACHE_TTL_MS, timeoutMs: Math.min(timeoutMs, DNS_TIMEOUT_MS), maxEntries: DNS_CACHE_ENTRIES }),
      trustedCaCertificates: options.trustedCaCertificates,
    }),
  });
  let closed = false;

  const targets = new Map<string, Target | undefined>();
  function targetOf(text: string): Target | undefined {
    if (targets.has(text)) return targets.get(text);
    const target = parseTarget(text);
    if (targets.size >= TARGET_CACHE_ENTRIES) targets.delete(targets.keys().next().value!);
    targets.set(text, target);
    return target;
  }

  function send(delivery: DeliveryRequest): Promise<AttemptOutcome> {
    const started = performance.now();
    const failure = (text: string, kind: AttemptOutcome["failure"] = "network_error", detail?: string): AttemptOutcome => ({
      ok: false,
      responseStatus: 0,
      responseBody: clip(text, MAX_ERROR_TEXT_CHARS),
      durationMs: Math.round(performance.now() - started),
      failure: kind,
      ...(detail === undefined ? {} : { detail: clip(detail, MAX_ERROR_TEXT_CHARS) }),
    });

    const target = targetOf(delivery.url);
    if (target === undefined) return Promise.resolve(failure("Invalid target URL"));
    if (closed) return Promise.resolve(failure("Dispatcher is closed"));

    let headers = delivery.headers;
    if (target.authorization !== undefined && !Object.keys(headers).some((name) => name.toLowerCase() === "authorization")) {
      headers = { ...headers, Authorization: target.authorization };
    }

    return new Promise((resolve) => {
      const exchange = new (viaDispatch ? Exchange : RequestedExchange)(maxBodyBytes, (status, text, err) => {
        clearTimeout(timer);
        if (err === undefined && status !== undefined) {
          resolve({
            ok: status >= 200 && status <= 299,
            responseStatus: status,
            responseBody: clip(text ?? "", maxChars),
            durationMs: Math.round(performance.now() - started),
          });
          return;
        }
        const reason = err ?? new Error("No response");
        const description = describeFailure(reason, target.hostname, timeoutMs);
        if (isUnreachableTarget(reason)) {
          resolve(failure(TARGET_UNREACHABLE_MESSAGE, failureKind(reason), description));
          return;
        }
        // An answer cut off mid-body is not an answer within the time-out (interface §3), so it is
        // recorded as "no HTTP answer" with the status kept in the text for whoever debugs it.
        resolve(failure(status === undefined ? description : `${description} while reading the response body (HTTP ${status})`, failureKind(reason)));
      });
      const timer = setTimeout(() => exchange.timeOut(new DeliveryTimeoutError(timeoutMs)), timeoutMs);
      // No redirect handling is configured, so a 3xx is returned as is and never followed
      // (decisions §6): following one would let a receiver bounce us to an unchecked target.
      // dispatch reports its own errors (a bad header, a closed agent) to the handler.
      const request = { origin: target.origin, path: target.path, method: "POST", headers, body: delivery.body } as const;
      if (exchange instanceof Exchange) agent.dispatch(request, exchange);
      else void exchange.start(agent, request);
    });
  }

  async function close(): Promise<void> {
    if (closed) return;
    closed = true;
    await agent.close();
  }

  return { send, close };
}
