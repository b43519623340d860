/**
 * A bounded set of recently added strings, held in memory: at most `maxEntries` (the least recently
 * added go first) and, with a `ttlMs`, each forgotten that long after it was last added. For
 * remembering what a process saw lately where forgetting costs only a lookup (the gateway's recently
 * authenticated API keys, webhook-delivery's businesses with subscribers).
 */
export class RecentSet {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly ttlMs = Number.POSITIVE_INFINITY,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  has(item: string): boolean {
    const expiresAt = this.expiries.get(item);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.now()) return true;
    this.expiries.delete(item);
    return false;
  }

  add(item: string): void {
    this.expiries.delete(item); // re-inserted last: Map order makes the oldest entry first to go
    this.expiries.set(item, this.now() + this.ttlMs);
    if (this.expiries.size > this.maxEntries) this.expiries.delete(this.expiries.keys().next().value!);
  }

  delete(item: string): void {
    this.expiries.delete(item);
  }
}
