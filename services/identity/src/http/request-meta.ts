// What identity needs to know about the original client. Every request here carries a valid
// internal token, i.e. came through the gateway, so the gateway's X-Forwarded-* headers are trusted.
import { isIP } from "node:net";
import type { Request } from "express";

function firstForwarded(req: Request, header: string): string | undefined {
  const value = req.get(header);
  const first = value?.split(",")[0]?.trim();
  return first ? first : undefined;
}

export function clientAddress(req: Request): string {
  const forwarded = firstForwarded(req, "x-forwarded-for");
  return forwarded && isIP(forwarded) ? forwarded : (req.socket.remoteAddress ?? "unknown");
}

function isLoopback(address: string): boolean {
  const plain = address.startsWith("::ffff:") ? address.slice(7) : address;
  return plain === "::1" || /^127\.\d+\.\d+\.\d+$/.test(plain);
}

/** The cookie gets `Secure` unless the client spoke plain HTTP from loopback (local development). */
export function wantsSecureCookie(req: Request): boolean {
  const proto = firstForwarded(req, "x-forwarded-proto") ?? req.protocol;
  return !(proto === "http" && isLoopback(clientAddress(req)));
}

export function readCookie(req: Request, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0 || part.slice(0, eq).trim() !== name) continue;
    const raw = part
      .slice(eq + 1)
      .trim()
      .replace(/^"(.*)"$/, "$1");
    try {
      return decodeURIComponent(raw) || undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
