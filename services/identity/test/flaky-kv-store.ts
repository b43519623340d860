// A real store (in-process by default) whose writes can be made to fail, as Redis's do when it is
// unreachable or refuses writes, and whose every operation can be delayed by a random few
// milliseconds, so that races between requests explore many more interleavings.
import { MemoryKvStore, type KvStore } from "@crm/kv-store";

export class FlakyKvStore implements KvStore {
  /** While true, every write to a key this predicate accepts throws. */
  failWritesTo: ((key: string) => boolean) | undefined;
  failedWrites = 0;

  constructor(
    readonly inner: KvStore = new MemoryKvStore(),
    /** Each operation first waits a random 0..maxDelayMs milliseconds. */
    private readonly maxDelayMs = 0,
  ) {}

  private async delay(): Promise<void> {
    if (this.maxDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * this.maxDelayMs));
  }

  private async guard(key: string): Promise<void> {
    await this.delay();
    if (this.failWritesTo?.(key)) {
      this.failedWrites += 1;
      throw new Error(`simulated store failure writing ${key}`);
    }
  }

  async get(key: string) {
    await this.delay();
    return this.inner.get(key);
  }
  async getMany(keys: readonly string[]) {
    await this.delay();
    return this.inner.getMany(keys);
  }
  async members(key: string) {
    await this.delay();
    return this.inner.members(key);
  }
  async set(key: string, value: string, ttlMs?: number) {
    await this.guard(key);
    return this.inner.set(key, value, ttlMs);
  }
  async setIfAbsent(key: string, value: string, ttlMs: number) {
    await this.guard(key);
    return this.inner.setIfAbsent(key, value, ttlMs);
  }
  async del(...keys: string[]) {
    for (const key of keys) await this.guard(key);
    return this.inner.del(...keys);
  }
  async increment(key: string, ttlMs: number) {
    await this.guard(key);
    return this.inner.increment(key, ttlMs);
  }
  async addToSet(key: string, member: string, ttlMs?: number) {
    await this.guard(key);
    return this.inner.addToSet(key, member, ttlMs);
  }
  async removeFromSet(key: string, member: string) {
    await this.guard(key);
    return this.inner.removeFromSet(key, member);
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}
