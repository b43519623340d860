// A forwarded request handed to a service's Express app in the same process (the single process),
// with no socket: over loopback HTTP each forward cost the one main thread undici's client side,
// node:http's server side and two loopback writes, for bytes that never leave the process.
//
// The request and response are built from the classes the service's own HTTP server builds them from
// (InProcessHandler), so every middleware of the service runs on objects of the same shape and
// prototype as off the wire. The request carries the forwarded headers and the exact body bytes; the
// response is collected as a socket would have carried it: its status, its headers and its body
// (what it wrote after the header block, which is never serialised into bytes here).
import { EventEmitter } from "node:events";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { InProcessHandler } from "@crm/service-kit";

/** A service's answer, as the forwarder reads it from either transport. */
export interface InProcessAnswer {
  status: number;
  headers: Record<string, string | string[]>;
  body: Buffer;
}

/** The answer is larger than the gateway relays; `declaredLength` when its Content-Length said so. */
export class InProcessTooLarge extends Error {
  constructor(readonly declaredLength: number | undefined) {
    super("answer larger than UPSTREAM_MAX_RESPONSE_BYTES");
  }
}

/**
 * What a request's `socket` is asked for by the service's code: the peer's address (req.ip, the
 * identity service's request metadata), not encrypted (req.protocol), and events (on-finished listens
 * for "error"/"close" on it). Nothing is read from or written to it.
 */
class NoSocket extends EventEmitter {
  readonly remoteAddress = "127.0.0.1";
  readonly remoteFamily = "IPv4";
  readonly encrypted = undefined;
  readonly readable = false;
  readonly writable = false;
  readonly destroyed = false;
  setTimeout(): this {
    return this;
  }
  destroy(): this {
    return this;
  }
}

const EXCHANGE = Symbol("in-process exchange");

interface Exchanged {
  [EXCHANGE]: Exchange;
}

/** One forwarded request's answer as it is written. */
class Exchange {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  private headersSeen = false;
  /** Settled: answered, refused, or given up on (time-out, too large); later writes go nowhere. */
  settled = false;
  timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly maxBytes: number,
    private readonly resolve: (answer: InProcessAnswer) => void,
    private readonly reject: (err: unknown) => void,
  ) {}

  /** What node:http would hand the socket: `data` after the header block, never the block itself. */
  send(data: string | Uint8Array, encoding: BufferEncoding | null | undefined, callback: (() => void) | null | undefined): boolean {
    if (this.settled) return false; // as a destroyed socket: nothing written, no callback
    if (!this.headersSeen) {
      this.headersSeen = true;
      const declared = Number(this.res.getHeader("content-length"));
      if (declared > this.maxBytes) {
        this.fail(new InProcessTooLarge(declared));
        return false;
      }
    }
    if (data.length > 0) {
      const chunk = typeof data === "string" ? Buffer.from(data, encoding ?? "utf8") : Buffer.isBuffer(data) ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
      this.bytes += chunk.length;
      if (this.bytes > this.maxBytes) {
        this.fail(new InProcessTooLarge(undefined));
        return false;
      }
      this.chunks.push(chunk);
    }
    if (callback) process.nextTick(callback);
    return true;
  }

  /** The response's "finish": everything it wrote is here. */
  finish(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    const { res } = this;
    const headers: Record<string, string | string[]> = {};
    const set = res.getHeaders();
    for (const name in set) {
      const value = set[name];
      if (value !== undefined) headers[name] = typeof value === "object" ? value : String(value);
    }
    this.resolve({ status: res.statusCode, headers, body: this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.bytes) });
    process.nextTick(emitClose, res);
  }

  /**
   * Gives up on the answer, as undici does by closing the connection: the service's response closes
   * unfinished (its request metrics and span see a caller that went away) and what it writes later
   * goes nowhere.
   */
  fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.chunks.length = 0;
    this.reject(err);
    process.nextTick(emitClose, this.res);
  }
}

/** node:http's own end of a response (emitCloseNT): "close" once, the response destroyed. */
function emitClose(res: ServerResponse): void {
  const closing = res as ServerResponse & { _closed?: boolean };
  if (closing._closed) return;
  closing.destroyed = true;
  closing._closed = true;
  res.emit("close");
}

/** OutgoingMessage's `_send`, for a response with no socket: see Exchange.send. */
function sendInProcess(
  this: ServerResponse & Exchanged & { _headerSent: boolean },
  data: string | Uint8Array,
  encoding?: BufferEncoding | null | (() => void),
  callback?: (() => void) | null,
): boolean {
  if (typeof encoding === "function") {
    callback = encoding;
    encoding = null;
  }
  this._headerSent = true;
  return this[EXCHANGE].send(data, encoding, callback);
}

export interface InProcessRequest {
  method: string;
  /** Path and query, as on the request line. */
  path: string;
  /** Lower-case names, as node:http hands them to the service. */
  headers: Record<string, string>;
  body: Buffer | undefined;
}

/**
 * Hands `request` to the service's app and resolves with its answer. Rejects with InProcessTooLarge
 * beyond `maxBytes`, and with another error when the service is stopped, throws outside Express's
 * error handling, or does not finish its answer within `timeoutMs` (the forwarder's 503000).
 */
export function dispatchInProcess(handler: InProcessHandler, request: InProcessRequest, options: { timeoutMs: number; maxBytes: number }): Promise<InProcessAnswer> {
  return new Promise<InProcessAnswer>((resolve, reject) => {
    if (!handler.open) return reject(new Error("the service is not listening"));
    const req = new handler.IncomingMessage(new NoSocket() as never);
    req.method = request.method;
    req.url = request.path;
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.httpVersion = "1.1";
    const headers = request.headers;
    headers.host = handler.host;
    req.headers = headers;
    const raw = req.rawHeaders;
    for (const name in headers) raw.push(name, headers[name]!);
    // The whole body is here already: the request has arrived complete, as node:http marks it.
    if (request.body && request.body.length > 0) req.push(request.body);
    req.push(null);
    req.complete = true;

    const res = new handler.ServerResponse(req);
    // Neither reaches the caller: the forwarder passes back a fixed set of headers, never Date, and
    // reads the body as written (no chunked framing to undo).
    res.sendDate = false;
    res.useChunkedEncodingByDefault = false;
    const exchange = new Exchange(res, options.maxBytes, resolve, reject);
    // Own properties: Express replaces the response's prototype with the app's, so an override on
    // a prototype of ours would be gone by the first middleware.
    (res as unknown as Exchanged)[EXCHANGE] = exchange;
    (res as unknown as { _send: typeof sendInProcess })._send = sendInProcess;
    res.on("finish", () => {
      // As node:http does once a response finished: a body nobody read is drained, so the request ends and closes.
      if (!req.readableEnded) (req as IncomingMessage & { _dump(): void })._dump();
      exchange.finish();
    });
    exchange.timer = setTimeout(() => exchange.fail(new Error(`no answer within ${options.timeoutMs} ms`)), options.timeoutMs);
    try {
      handler.handle(req, res);
    } catch (err) {
      exchange.fail(err);
    }
  });
}
