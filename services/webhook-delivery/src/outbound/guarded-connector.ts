// The connections a webhook attempt may open: every address it connects to is one the SSRF guard
// (ssrf-guard.ts) allowed, checked in the very resolution the socket uses (decisions §6).
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { rootCertificates } from "node:tls";
import { buildConnector } from "undici";
import type { HostResolver } from "./dispatcher";
import { isForbiddenAddress, targetNotAllowedMessage } from "./ssrf-guard";

/** Raised inside the connector when the target resolves to a forbidden address. */
export class TargetNotAllowedError extends Error {
  readonly code = "ERR_WEBHOOK_TARGET_NOT_ALLOWED";
  constructor(readonly address: string) {
    super(targetNotAllowedMessage(address));
    this.name = "TargetNotAllowedError";
  }
}

export const systemResolver: HostResolver = (hostname, family) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, family }, (err, addresses: LookupAddress[]) => {
      if (err) reject(err);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

/**
 * The `lookup` handed to net/tls.connect. Resolution and the SSRF check happen here, in the very
 * call whose answer the socket connects to, so the checked addresses are the connected addresses:
 * a DNS rebinding answer between "check" and "connect" is impossible because there is only one
 * resolution. Node's happy-eyeballs (`all: true`) then only ever picks among checked addresses.
 */
function createGuardedLookup(resolveHost: HostResolver, allowPrivateTargets: boolean): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    const family = options.family === 4 || options.family === "IPv4" ? 4 : options.family === 6 || options.family === "IPv6" ? 6 : 0;
    resolveHost(hostname, family).then(
      (resolved) => {
        const addresses = family === 0 ? resolved : resolved.filter((a) => a.family === family);
        const first = addresses[0];
        if (first === undefined) {
          callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND", hostname }), "");
          return;
        }
        // One forbidden answer refuses the host: a name that mixes public and internal addresses is
        // either misconfigured or an attack, and picking "the good one" would invite the latter.
        const forbidden = allowPrivateTargets ? undefined : addresses.find((a) => isForbiddenAddress(a.address));
        if (forbidden !== undefined) {
          callback(new TargetNotAllowedError(forbidden.address), "");
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, first.address, first.family);
      },
      (err: unknown) => callback(err as NodeJS.ErrnoException, ""),
    );
  };
}

/**
 * undici connector: IP literals never reach `lookup` (net connects to them directly), so they are
 * checked here; host names are checked by the guarded lookup.
 */
export function createGuardedConnector(options: {
  timeoutMs: number;
  allowPrivateTargets: boolean;
  resolveHost: HostResolver;
  trustedCaCertificates: readonly string[] | undefined;
}): buildConnector.connector {
  const base = buildConnector({
    timeout: options.timeoutMs,
    // Only the IP is pinned: the host name stays the TLS server name, so certificates are still
    // verified against the name in the webhook URL.
    lookup: createGuardedLookup(options.resolveHost, options.allowPrivateTargets),
    // `ca` replaces the default roots, so extra CAs are added to them rather than passed alone.
    ...(options.trustedCaCertificates?.length ? { ca: [...rootCertificates, ...options.trustedCaCertificates] } : {}),
  });
  return (connectOptions, callback) => {
    const { hostname } = connectOptions;
    if (!options.allowPrivateTargets && isIP(hostname) !== 0 && isForbiddenAddress(hostname)) {
      // Asynchronously, like a real connect failure, so undici's state machine sees the usual order.
      process.nextTick(() => callback(new TargetNotAllowedError(hostname), null));
      return;
    }
    base(connectOptions, callback);
  };
}
