/**
 * The key-value port behind token allow-lists, API-key and principal caches, idempotency records and
 * sign-in throttling. In-process in single-machine mode, Redis when REDIS_URL is set, so every
 * gateway and identity instance sees the same state.
 */
export interface KvStore {
  get(key: string): Promise<string | null>;
  getMany(keys: readonly string[]): Promise<Array<string | null>>;
  /** ttlMs undefined = no expiry. */
  set(key: string, value: string, ttlMs?: number): Promise<void>;
  /** Sets only when absent; true when this call set it (a lock / first-writer-wins). */
  setIfAbsent(key: string, value: string, ttlMs: number): Promise<boolean>;
  del(...keys: string[]): Promise<void>;
  /** Increments a counter, starting a window of ttlMs on first increment; returns the new value and its remaining ttl. */
  increment(key: string, ttlMs: number): Promise<{ value: number; ttlMs: number }>;
  /** Set members, for indexes such as "the sessions of a user". */
  addToSet(key: string, member: string, ttlMs?: number): Promise<void>;
  removeFromSet(key: string, member: string): Promise<void>;
  members(key: string): Promise<string[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
