import type { KvStore } from "./kv-store";
import { MemoryKvStore } from "./memory-kv-store";
import { RedisKvStore, REDIS_COMMAND_TIMEOUT_MS } from "./redis-kv-store";

export type { KvStore };
export { MemoryKvStore, RedisKvStore, REDIS_COMMAND_TIMEOUT_MS };

let processStore: { store: MemoryKvStore; users: number } | undefined;

/**
 * Redis when a URL is given; otherwise the one in-process store of this process, shared by every
 * service running in it (single-machine mode), so identity's allow-list writes are what the gateway reads.
 */
export function openKvStore(redisUrl: string | undefined, prefix?: string): KvStore {
  if (redisUrl) return new RedisKvStore(redisUrl, prefix);
  if (!processStore) processStore = { store: new MemoryKvStore(), users: 0 };
  processStore.users += 1;
  const shared = processStore;
  let closed = false;
  return new Proxy(shared.store, {
    get(target, prop, receiver) {
      if (prop === "close")
        return async () => {
          if (closed) return;
          closed = true;
          shared.users -= 1;
          if (shared.users === 0 && processStore === shared) {
            processStore = undefined;
            await target.close();
          }
        };
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
