/**
 * Digests of API keys this gateway has recently seen authenticate: a bounded, expiring set held in
 * memory. Membership only spares a key the pre-authentication budget check (see index.ts); it grants
 * nothing, since every request is still authenticated in full.
 */
export class RecentKeys {
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly ttlMs = 10 * 60_000,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  has(digest: string): boolean {
    const expiresAt = this.expiries.get(digest);
    if (expiresAt === undefined) return false;
    if (expiresAt > this.now()) return true;
    this.expiries.delete(digest);
    return false;
  }

  add(digest: string): void {
    this.expiries.delete(digest); // re-inserted last: Map order makes the oldest entry first to go
    this.expiries.set(digest, this.now() + this.ttlMs);
    if (this.expiries.size > this.maxEntries) this.expiries.delete(this.expiries.keys().next().value!);
  }

  delete(digest: string): void {
    this.expiries.delete(digest);
  }
}
