import { isIP, isIPv4, isIPv6 } from "node:net";

/**
 * Why an address may not receive deliveries. Webhook URLs are chosen by tenants, so without this a
 * tenant could make our servers call internal services or cloud metadata endpoints (SSRF).
 * Checked on every resolved address at connect time (the dispatcher) and, for literal IPs, at
 * create time (checkTargetUrl).
 */
export type ForbiddenCategory =
  | "unspecified"
  | "loopback"
  | "private"
  | "shared-address-space"
  | "link-local"
  | "cloud-metadata"
  | "unique-local"
  | "multicast"
  | "reserved"
  | "documentation"
  | "benchmarking"
  | "protocol-assignment"
  | "ipv4-embedding"
  | "not-global-unicast"
  | "invalid";

type V4Range = readonly [base: string, prefixLength: number, category: ForbiddenCategory];

// Special-purpose IPv4 ranges (IANA IPv4 Special-Purpose Address Registry) that no public webhook
// receiver can legitimately live in. Order matters only for which category is reported.
const V4_FORBIDDEN: readonly V4Range[] = [
  ["0.0.0.0", 8, "unspecified"], // "this network"; 0.0.0.0 reaches the local host on Linux
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared-address-space"], // CGNAT; also Alibaba Cloud metadata 100.100.100.200
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"], // also AWS/GCP/Azure metadata 169.254.169.254
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "protocol-assignment"], // also Oracle Cloud metadata 192.0.0.192
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved"], // deprecated 6to4 relay anycast
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"], // includes the limited broadcast 255.255.255.255
];

// Named explicitly although the ranges above already cover them: these are the addresses attackers
// aim for, so a future edit of the range table must not be able to let them through.
const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  "169.254.169.254", // AWS, GCP, Azure, OpenStack, DigitalOcean
  "169.254.170.2", // AWS ECS task metadata
  "100.100.100.200", // Alibaba Cloud
  "192.0.0.192", // Oracle Cloud
  "fd00:ec2::254", // AWS IMDS over IPv6
]);

function v4ToInt(address: string): number {
  const parts = address.split(".").map(Number);
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

function intToV4(value: number): string {
  return [value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join(".");
}

const V4_TABLE = V4_FORBIDDEN.map(([base, length, category]) => {
  const mask = length === 0 ? 0 : (0xffffffff << (32 - length)) >>> 0;
  // ">>> 0" keeps every value unsigned: JS bitwise operators return signed 32-bit integers.
  return { base: (v4ToInt(base) & mask) >>> 0, mask, category };
});

function categoryOfV4(value: number): ForbiddenCategory | null {
  if (METADATA_ADDRESSES.has(intToV4(value))) return "cloud-metadata";
  for (const range of V4_TABLE) {
    if ((value & range.mask) >>> 0 === range.base) return range.category;
  }
  return null;
}

/** Parses any textual IPv6 form node accepts (compressed, embedded dotted IPv4, zone id) to 128 bits. */
function v6ToBigInt(address: string): bigint | null {
  const withoutZone = address.split("%", 1)[0]!;
  if (!isIPv6(withoutZone)) return null;
  let text = withoutZone.toLowerCase();
  // A trailing dotted IPv4 ("::ffff:127.0.0.1") stands for the last two 16-bit groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = v4ToInt(dotted[1]!);
    text = text.slice(0, dotted.index) + `${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const missing = 8 - headGroups.length - tailGroups.length;
  const groups = tail === undefined ? headGroups : [...headGroups, ...Array<string>(missing).fill("0"), ...tailGroups];
  if (groups.length !== 8) return null;
  let value = 0n;
  for (const group of groups) value = (value << 16n) | BigInt(parseInt(group, 16));
  return value;
}

function v6Prefix(value: bigint, base: bigint, length: number): boolean {
  const shift = BigInt(128 - length);
  return value >> shift === base >> shift;
}

const LOW_32 = 0xffffffffn;

function categoryOfV6(value: bigint, text: string): ForbiddenCategory | null {
  if (METADATA_ADDRESSES.has(text)) return "cloud-metadata";
  if (value === 0n) return "unspecified";
  if (value === 1n) return "loopback";
  // Forms that carry an IPv4 address the kernel or a translator may end up connecting to: judge
  // the embedded IPv4 address, so ::ffff:127.0.0.1 is as loopback as 127.0.0.1.
  if (v6Prefix(value, 0xffff_0000_0000n, 96)) return categoryOfV4(Number(value & LOW_32)); // IPv4-mapped
  if (v6Prefix(value, 0xffff_0000_0000_0000n, 96)) return categoryOfV4(Number(value & LOW_32)); // IPv4-translated (RFC 2765)
  if (v6Prefix(value, 0x0064_ff9b_0000_0000_0000_0000_0000_0000n, 96)) return categoryOfV4(Number(value & LOW_32)); // NAT64
  if (v6Prefix(value, 0x2002n << 112n, 16)) return categoryOfV4(Number((value >> 80n) & LOW_32)); // 6to4
  // The rest of ::/96: deprecated IPv4-compatible addresses; no public receiver uses them.
  if (v6Prefix(value, 0n, 96)) return "ipv4-embedding";
  if (v6Prefix(value, 0x0064_ff9b_0001n << 80n, 48)) return "ipv4-embedding"; // local-use NAT64 (RFC 8215)
  if (v6Prefix(value, 0xfc00n << 112n, 7)) return "unique-local";
  if (v6Prefix(value, 0xfe80n << 112n, 10)) return "link-local";
  if (v6Prefix(value, 0xfec0n << 112n, 10)) return "private"; // deprecated site-local
  if (v6Prefix(value, 0xff00n << 112n, 8)) return "multicast";
  // Only 2000::/3 is allocated as global unicast; anything else (100::/64 discard, unallocated
  // space) cannot be a legitimate public receiver, so deny by default instead of listing it.
  if (!v6Prefix(value, 0x2000n << 112n, 3)) return "not-global-unicast";
  if (v6Prefix(value, 0x2001_0db8n << 96n, 32)) return "documentation";
  if (v6Prefix(value, 0x3fffn << 112n, 20)) return "documentation"; // RFC 9637
  if (v6Prefix(value, 0x2001_0002_0000n << 80n, 48)) return "benchmarking";
  // Teredo tunnels to an (obfuscated) IPv4 address we cannot judge cheaply, and ORCHID is not routable.
  if (v6Prefix(value, 0x2001_0000n << 96n, 32)) return "ipv4-embedding";
  if (v6Prefix(value, 0x2001_0010n << 96n, 28)) return "protocol-assignment";
  if (v6Prefix(value, 0x2001_0020n << 96n, 28)) return "protocol-assignment";
  return null;
}

/**
 * Why `ip` may not be a delivery target, or null when it may. Takes an address as resolvers and
 * sockets print it (dotted IPv4, any IPv6 form, optional [brackets] or %zone). Anything that is not
 * an IP address is reported "invalid" so callers fail closed.
 */
export function forbiddenCategory(ip: string): ForbiddenCategory | null {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  if (isIPv4(bare)) return categoryOfV4(v4ToInt(bare));
  const v6 = v6ToBigInt(bare);
  if (v6 === null) return "invalid";
  return categoryOfV6(v6, bare.split("%", 1)[0]!.toLowerCase());
}

/** True when deliveries to `ip` must be refused (unless private targets are explicitly allowed). */
export function isForbiddenAddress(ip: string): boolean {
  return forbiddenCategory(ip) !== null;
}

/** Message recorded as `responseBody` of a refused attempt, and returned by checkTargetUrl. */
export function targetNotAllowedMessage(address: string): string {
  return `Target address is not allowed: ${address}`;
}

export type TargetUrlCheck = { ok: true; url: URL } | { ok: false; message: string };

export interface TargetUrlOptions {
  /** WEBHOOK_ALLOW_PRIVATE_TARGETS: accept loopback/private literal addresses (tests, on-prem). */
  allowPrivateTargets?: boolean;
}

/**
 * Create-time check of a webhook `url` (decisions §6): an absolute http: or https: URL, and, when its
 * host is a literal IP address, not a forbidden one. Host names are NOT resolved here: DNS can change
 * after creation, so the dispatcher checks resolved addresses on every connection. The WHATWG parser
 * has already normalised every IPv4 spelling (2130706433, 0177.0.0.1, 0x7f.1) to dotted decimal and
 * IPv6 to its canonical form, so only canonical literals reach the address check.
 */
export function checkTargetUrl(url: string, options: TargetUrlOptions = {}): TargetUrlCheck {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, message: "Must be an absolute http: or https: URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { ok: false, message: "Must be an absolute http: or https: URL" };
  }
  if (parsed.hostname === "") return { ok: false, message: "Must be an absolute http: or https: URL" };
  const host = parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname;
  if (!options.allowPrivateTargets && isIP(host) !== 0 && isForbiddenAddress(host)) {
    return { ok: false, message: targetNotAllowedMessage(host) };
  }
  return { ok: true, url: parsed };
}
