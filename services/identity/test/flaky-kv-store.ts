// A real in-process store whose writes can be made to fail, as Redis's do when it is unreachable
// or refuses writes: to prove that a write-through that did not land is not answered as success.
import { MemoryKvStore, type KvStore } from "@crm/kv-store";

export class FlakyKvStore implements KvStore {
  /** While true, every write to a key this predicate accepts throws. */
  failWritesTo: ((key: string) => boolean) | undefined;
  failedWrites = 0;

  constructor(readonly inner: KvStore = new MemoryKvStore()) {}

  private guard(key: string): void {
    if (this.failWritesTo?.(key)) {
      this.failedWrites += 1;
      throw new Error(`simulated store failure writing ${key}`);
    }
  }

  get(key: string) {
    return this.inner.get(key);
  }
  getMany(keys: readonly string[]) {
    return this.inner.getMany(keys);
  }
  members(key: string) {
    return this.inner.members(key);
  }
  async set(key: string, value: string, ttlMs?: number) {
    this.guard(key);
    return this.inner.set(key, value, ttlMs);
  }
  async setIfAbsent(key: string, value: string, ttlMs: number) {
    this.guard(key);
    return this.inner.setIfAbsent(key, value, ttlMs);
  }
  async del(...keys: string[]) {
    keys.forEach((k) => this.guard(k));
    return this.inner.del(...keys);
  }
  async increment(key: string, ttlMs: number) {
    this.guard(key);
    return this.inner.increment(key, ttlMs);
  }
  async addToSet(key: string, member: string, ttlMs?: number) {
    this.guard(key);
    return this.inner.addToSet(key, member, ttlMs);
  }
  async removeFromSet(key: string, member: string) {
    this.guard(key);
    return this.inner.removeFromSet(key, member);
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}
