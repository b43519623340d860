// Interface §6 "Signature", for receivers: key = lowercase hex SHA-256 of the secret, used as HMAC key
// text; header = `sha256=` + lowercase hex HMAC-SHA256 of the raw body. Kept independent of the
// product's signer on purpose: this is what a partner runs.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";

const PREFIX = "sha256=";
const SIGNATURE = /^[0-9a-f]{64}$/;

/**
 * True when `header` (the `X-Service-Signature` value) signs `rawBody` under `secret`. Pass the body
 * exactly as received: parsing and re-serialising JSON changes the bytes. Never throws.
 */
export function verifyWebhookSignature(secret: string, rawBody: string | Buffer | Uint8Array, header: string | readonly string[] | null | undefined): boolean {
  try {
    // A repeated header (an array) is ambiguous: refuse rather than pick one.
    if (typeof secret !== "string" || secret.length === 0 || typeof header !== "string") return false;
    if (typeof rawBody !== "string" && !(rawBody instanceof Uint8Array)) return false;
    if (!header.startsWith(PREFIX)) return false;
    const given = header.slice(PREFIX.length);
    // Format only (no secret involved), so checking it before the constant-time compare leaks nothing.
    if (!SIGNATURE.test(given)) return false;
    const key = createHash("sha256").update(secret, "utf8").digest("hex");
    const expected = createHmac("sha256", key).update(rawBody).digest();
    return timingSafeEqual(expected, Buffer.from(given, "hex"));
  } catch {
    return false;
  }
}
