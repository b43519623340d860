import type { HostResolver, ResolvedAddress } from "./dispatcher";

export interface CachingResolverOptions {
  /** How long an answer is reused (getaddrinfo gives no TTL; short, so DNS changes are seen soon). */
  ttlMs: number;
  /** A lookup that takes longer fails with EAI_AGAIN (counted as a failed attempt, retried later). */
  timeoutMs: number;
  /** Host names remembered at most; the oldest is forgotten first. */
  maxEntries: number;
  now?: () => number;
}

interface Entry {
  expiresAt: number;
  addresses: Promise<ResolvedAddress[]>;
}

/**
 * Wraps a resolver with a time-out, a small cache and one lookup in flight per name. Node's lookups
 * run on libuv's 4-thread pool with no time-out of their own: twenty deliveries to one slow-resolving
 * host would otherwise take every thread (and stall file and crypto work) for as long as the resolver
 * hangs. The answer is only reused, never trusted: the dispatcher checks every address it is given
 * against the SSRF rules and connects to exactly that address, cached or not.
 */
export function cachingResolver(resolve: HostResolver, options: CachingResolverOptions): HostResolver {
  const now = options.now ?? Date.now;
  const cache = new Map<string, Entry>();

  const withTimeout = (hostname: string, family: 0 | 4 | 6): Promise<ResolvedAddress[]> =>
    new Promise((ok, fail) => {
      const timer = setTimeout(() => {
        fail(Object.assign(new Error(`DNS lookup of ${hostname} timed out after ${options.timeoutMs} ms`), { code: "EAI_AGAIN", hostname }));
      }, options.timeoutMs);
      resolve(hostname, family).then(
        (addresses) => {
          clearTimeout(timer);
          ok(addresses);
        },
        (err: unknown) => {
          clearTimeout(timer);
          fail(err);
        },
      );
    });

  return (hostname, family) => {
    const key = `${family}:${hostname.toLowerCase()}`;
    const hit = cache.get(key);
    if (hit && hit.expiresAt > now()) return hit.addresses;
    const addresses = withTimeout(hostname, family);
    cache.delete(key);
    cache.set(key, { expiresAt: now() + options.ttlMs, addresses });
    // Failures are not cached: the next attempt asks again.
    addresses.catch(() => {
      if (cache.get(key)?.addresses === addresses) cache.delete(key);
    });
    while (cache.size > options.maxEntries) cache.delete(cache.keys().next().value!);
    return addresses;
  };
}
