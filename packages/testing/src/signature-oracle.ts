import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/**
 * Interface §6 Signature, written from the text rather than reusing the product's signer (the
 * oracle tests check deliveries against): key = hex SHA-256 of the secret (as text), signature =
 * hex HMAC-SHA256 of the raw body, header `sha256=<hex>`, constant-time comparison.
 */
export function verifyInterfaceSignature(secret: string, rawBody: string, header: string | undefined): boolean {
  if (!header?.startsWith("sha256=")) return false;
  const key = createHash("sha256").update(secret).digest("hex");
  const expected = Buffer.from(createHmac("sha256", key).update(rawBody).digest("hex"));
  const received = Buffer.from(header.slice("sha256=".length));
  return received.length === expected.length && timingSafeEqual(received, expected);
}
