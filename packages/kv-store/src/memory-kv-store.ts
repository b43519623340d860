import type { KvStore } from "./kv-store";

interface Entry {
  value: string | Set<string>;
  expiresAt: number | undefined;
}

/** In-process KvStore with the same expiry semantics as Redis (lazy expiry plus a periodic sweep). */
export class MemoryKvStore implements KvStore {
  private readonly entries = new Map<string, Entry>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  private live(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt !== undefined && entry.expiresAt <= this.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.expiresAt !== undefined && entry.expiresAt <= now) this.entries.delete(key);
  }

  private expiry(ttlMs: number | undefined): number | undefined {
    return ttlMs === undefined ? undefined : this.now() + ttlMs;
  }

  async get(key: string): Promise<string | null> {
    const entry = this.live(key);
    return typeof entry?.value === "string" ? entry.value : null;
  }

  async getMany(keys: readonly string[]): Promise<Array<string | null>> {
    return Promise.all(keys.map((k) => this.get(k)));
  }

  async set(key: string, value: string, ttlMs?: number): Promise<void> {
    this.entries.set(key, { value, expiresAt: this.expiry(ttlMs) });
  }

  async setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean> {
    if (this.live(key)) return false;
    this.entries.set(key, { value, expiresAt: this.expiry(ttlMs) });
    return true;
  }

  async del(...keys: string[]): Promise<void> {
    for (const key of keys) this.entries.delete(key);
  }

  async increment(key: string, ttlMs: number): Promise<{ value: number; ttlMs: number }> {
    const entry = this.live(key);
    if (!entry || typeof entry.value !== "string") {
      const expiresAt = this.now() + ttlMs;
      this.entries.set(key, { value: "1", expiresAt });
      return { value: 1, ttlMs };
    }
    const value = Number(entry.value) + 1;
    entry.value = String(value);
    return { value, ttlMs: Math.max(0, (entry.expiresAt ?? this.now()) - this.now()) };
  }

  async addToSet(key: string, member: string, ttlMs?: number): Promise<void> {
    const entry = this.live(key);
    if (entry && entry.value instanceof Set) {
      entry.value.add(member);
      if (ttlMs !== undefined) entry.expiresAt = Math.max(entry.expiresAt ?? 0, this.now() + ttlMs);
      return;
    }
    this.entries.set(key, { value: new Set([member]), expiresAt: this.expiry(ttlMs) });
  }

  async removeFromSet(key: string, member: string): Promise<void> {
    const entry = this.live(key);
    if (entry && entry.value instanceof Set) entry.value.delete(member);
  }

  async members(key: string): Promise<string[]> {
    const entry = this.live(key);
    return entry && entry.value instanceof Set ? [...entry.value] : [];
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
