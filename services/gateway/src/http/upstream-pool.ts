// Several replicas of one service behind the gateway (IDENTITY_URL, CRM_RECORDS_URL and
// WEBHOOK_DELIVERY_URL each take a comma list): requests go round-robin, and one that found no
// replica listening (refused), or lost its connection before any answer byte (reset), is sent once
// more to another replica when that is safe (docs/operations.md, "Rolling restarts"):
// - refused: always, whatever the method; nothing reached the service.
// - reset: only GET, HEAD, and a request with an Idempotency-Key on a route whose service claims the
//   key in its own write (crm-records' creates: the repeat is answered from the claim); anything else
//   may have been done, and is not done a second time (issue 42).
// A replica that refused is skipped for REFUSED_REST_MS (while another is up), so a stopped replica
// costs one refused connection per gateway, not one per request.

/** One replica's base URL, or several (a config value split on commas). */
export type Upstream = string | readonly string[];

/** How long a replica that refused a connection is passed over while another is available. */
export const REFUSED_REST_MS = 1_000;

/** Connection failures where no answer byte came: the only ones retried. */
const REFUSED = new Set(["ECONNREFUSED"]);
const RESET = new Set(["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"]);

/** Whether `err` (undici's or fetch's, whose cause is undici's) is a refused or reset connection. */
export function connectionFailure(err: unknown): "refused" | "reset" | undefined {
  // Not `instanceof Error`: errors from another realm (Node's own under jest's VM) are not.
  for (let e = err as { code?: unknown; cause?: unknown } | null | undefined, depth = 0; typeof e === "object" && e !== null && depth < 3; e = e.cause as typeof e, depth++) {
    const code = e.code;
    if (typeof code !== "string") continue;
    if (REFUSED.has(code)) return "refused";
    if (RESET.has(code)) return "reset";
  }
  return undefined;
}

/**
 * GET, HEAD, or a request with an Idempotency-Key whose service claims the key itself (Route's
 * keyClaimedByService). The gateway's own store cannot make a repeat safe: the first attempt's entry is
 * still in flight, so the repeat would reach the service as a second run.
 */
export function safeToRepeat(method: string, headers: Readonly<Record<string, string | string[] | undefined>>, keyClaimedByService = false): boolean {
  return method === "GET" || method === "HEAD" || (keyClaimedByService && headers["idempotency-key"] !== undefined);
}

/** Whether a forward that got no answer may have been run by the service: anything but a refused connection. */
export function mayHaveRun(err: unknown): boolean {
  return connectionFailure(err) !== "refused";
}

interface Replica<T> {
  url: string;
  target: T;
  /** `performance.now()` before which this replica is passed over (it refused a connection). */
  restUntil: number;
}

/** The replicas of one service, each with what calls it (an undici pool, or just its URL), chosen in turn. */
export class UpstreamPool<T> {
  private readonly replicas: Replica<T>[];
  private next = 0;

  constructor(
    upstream: Upstream,
    make: (url: string) => T,
    private readonly now: () => number = () => performance.now(),
  ) {
    const urls = typeof upstream === "string" ? [upstream] : upstream;
    if (urls.length === 0) throw new Error("an upstream needs at least one URL");
    this.replicas = urls.map((url) => ({ url, target: make(url), restUntil: 0 }));
  }

  get targets(): T[] {
    return this.replicas.map((r) => r.target);
  }

  /**
   * `call` on the next replica in turn; on a refused or reset connection, once more on another one
   * (when there is another, and for a reset only when `repeatable`). Any other failure, or the second
   * one, is the caller's.
   */
  async send<R>(repeatable: boolean, call: (target: T, url: string) => Promise<R>): Promise<R> {
    const first = this.pick(undefined);
    try {
      return await call(first.target, first.url);
    } catch (err) {
      const failure = connectionFailure(err);
      if (failure === "refused") first.restUntil = this.now() + REFUSED_REST_MS;
      if (failure === undefined || (failure === "reset" && !repeatable) || this.replicas.length === 1) throw err;
      const second = this.pick(first);
      const answer = await call(second.target, second.url).catch((again: unknown) => {
        if (connectionFailure(again) === "refused") second.restUntil = this.now() + REFUSED_REST_MS;
        throw again;
      });
      return answer;
    }
  }

  /** `check` on each replica in turn until one passes: a service is available while one replica is. */
  async any(check: (target: T, url: string) => Promise<void>): Promise<void> {
    let last: unknown;
    for (const replica of this.replicas) {
      try {
        return await check(replica.target, replica.url);
      } catch (err) {
        last = err;
      }
    }
    throw last;
  }

  /** The next replica in turn, other than `not`, skipping resting ones unless every candidate rests. */
  private pick(not: Replica<T> | undefined): Replica<T> {
    const count = this.replicas.length;
    if (count === 1) return this.replicas[0]!;
    const now = this.now();
    let fallback: Replica<T> | undefined;
    for (let i = 0; i < count; i++) {
      const replica = this.replicas[(this.next + i) % count]!;
      if (replica === not) continue;
      if (replica.restUntil <= now) {
        this.next = (this.next + i + 1) % count;
        return replica;
      }
      fallback ??= replica;
    }
    this.next = (this.next + 1) % count;
    return fallback ?? this.replicas.find((r) => r !== not)!;
  }
}
