// API keys' address allow-lists (extensions §E3.2): identity normalises what a caller writes, and the
// gateway decides each request from the key's cached list, with no I/O. ipaddr.js (Express's own
// address library, through proxy-addr) parses and prints; node:net decides what counts as an address,
// so shorthand IPv4 forms such as "127.1" or "0x7f.0.0.1" are refused rather than guessed at.
import net from "node:net";
import ipaddr from "ipaddr.js";

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/**
 * The canonical form of one allow-list entry, or undefined when it is not an IPv4 or IPv6 address or
 * CIDR block: a bare address becomes /32 or /128, an IPv4-mapped IPv6 address or block becomes IPv4,
 * host bits are cleared ("10.1.2.3/8" → "10.0.0.0/8"), IPv6 is printed as RFC 5952 says.
 */
export function normalizeAllowedIp(entry: string): string | undefined {
  const range = parseRange(entry);
  if (!range) return undefined;
  const [address, bits] = range;
  const network = address.kind() === "ipv4" ? ipaddr.IPv4.networkAddressFromCIDR(`${address}/${bits}`) : ipaddr.IPv6.networkAddressFromCIDR(`${address}/${bits}`);
  return `${network.toString()}/${bits}`;
}

function parseRange(entry: string): Range | undefined {
  const [text, bitsText, extra] = entry.trim().split("/");
  if (text === undefined || extra !== undefined || !net.isIP(text)) return undefined;
  let address = ipaddr.parse(text);
  const maxBits = address.kind() === "ipv4" ? 32 : 128;
  let bits = maxBits;
  if (bitsText !== undefined) {
    if (!/^\d{1,3}$/.test(bitsText)) return undefined;
    bits = Number(bitsText);
    if (bits > maxBits) return undefined;
  }
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress()) {
    // ::ffff:0:0/96 is IPv4's whole space; a mapped block shorter than /96 is not an IPv4 block.
    if (bits < 96) return [address, bits];
    address = address.toIPv4Address();
    bits -= 96;
  }
  return [address, bits];
}

/** A client address as it is shown (`lastUsedIp`): IPv4-mapped IPv6 as IPv4, IPv6 as RFC 5952 says. */
export function canonicalAddress(address: string): string {
  return net.isIP(address) ? ipaddr.process(address).toString() : address;
}

/** An allow-list ready for requests: `allows(address)` for a client address as the socket gives it. */
export class AllowList {
  private readonly ranges: Range[];

  constructor(entries: readonly string[]) {
    this.ranges = entries.flatMap((entry) => {
      const range = parseRange(entry);
      return range ? [range] : [];
    });
  }

  allows(clientAddress: string): boolean {
    if (!net.isIP(clientAddress)) return false;
    const address = ipaddr.process(clientAddress);
    return this.ranges.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits));
  }
}
