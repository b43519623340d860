import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { WEBHOOK_SECRET_PREFIX } from "./secret";

/** Value of `User-Agent` on every delivery, so receivers can recognise (and allow-list) us. */
export const DELIVERY_USER_AGENT = "crm-webhooks/1";

const SERVICE_SIGNATURE_SCHEME = "sha256=";

/**
 * Interface §6 Signature, rule 1: the HMAC key is the lowercase hex SHA-256 digest of the whole
 * secret string (prefix included), used as key TEXT: the 64 ASCII characters, not the 32 raw bytes.
 */
export function serviceSigningKey(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Rule 2: lowercase hex HMAC-SHA256 of the raw body under the signing key. */
export function computeServiceSignature(secret: string, rawBody: string): string {
  return serviceSignatureUnder(serviceSigningKey(secret), rawBody);
}

/** Rule 2 under a signing key already derived (serviceSigningKey); the body as text or its UTF-8 bytes. */
function serviceSignatureUnder(signingKey: string, rawBody: string | Buffer): string {
  return createHmac("sha256", signingKey).update(rawBody).digest("hex");
}

/** Rule 3: the `X-Service-Signature` header value, `sha256=<hex>`. */
export function serviceSignatureHeader(secret: string, rawBody: string): string {
  return SERVICE_SIGNATURE_SCHEME + computeServiceSignature(secret, rawBody);
}

/**
 * Rule 4, as a receiver does it: over the raw body string, prefix removed, constant-time compare.
 * Returns false (never throws) for a missing or malformed header. Exported for our own tests and
 * for documentation samples; the service itself only signs.
 */
export function verifyServiceSignature(secret: string, rawBody: string, header: string | null | undefined): boolean {
  if (typeof header !== "string" || !header.startsWith(SERVICE_SIGNATURE_SCHEME)) return false;
  const received = Buffer.from(header.slice(SERVICE_SIGNATURE_SCHEME.length), "utf8");
  const expected = Buffer.from(computeServiceSignature(secret, rawBody), "utf8");
  // timingSafeEqual throws on unequal lengths; a length mismatch reveals nothing secret (the
  // expected length is public: always 64), so it may short-circuit.
  if (received.length !== expected.length) return false;
  return timingSafeEqual(received, expected);
}

/**
 * The Standard Webhooks key: the bytes encoded after `whsec_` (the same rule the reference libraries
 * use: strip the prefix if present, base64-decode the rest).
 */
function standardWebhooksKey(secret: string): Buffer {
  const encoded = secret.startsWith(WEBHOOK_SECRET_PREFIX) ? secret.slice(WEBHOOK_SECRET_PREFIX.length) : secret;
  return Buffer.from(encoded, "base64");
}

/**
 * One signature of `webhook-signature` (the Standard Webhooks specification): `v1,` + base64
 * HMAC-SHA256 of `${id}.${timestamp}.${body}` under the key standardWebhooksKey derives. Sent in
 * addition to the interface's own signature so receivers can use off-the-shelf verifiers, which also
 * check the timestamp against replays.
 */
function standardWebhookSignature(key: Buffer, id: string, timestamp: number, body: Buffer): string {
  return `v1,${createHmac("sha256", key).update(`${id}.${timestamp}.`, "utf8").update(body).digest("base64")}`;
}

/**
 * A secret's two HMAC keys (interface §6 rule 1, and Standard Webhooks'), which depend on the secret
 * alone: derived once per opened secret (SHA-256 of the secret, base64 of its tail) instead of per
 * attempt. They sign exactly as the secret itself does.
 */
export interface SigningKeys {
  /** The lowercase hex SHA-256 of the secret, as key text (serviceSigningKey). */
  service: string;
  /** The bytes after `whsec_`. */
  standard: Buffer;
}

export function signingKeys(secret: string): SigningKeys {
  return { service: serviceSigningKey(secret), standard: standardWebhooksKey(secret) };
}

export interface DeliveryHeadersInput {
  /** The delivery record's id: the same on every attempt, so receivers can de-duplicate. */
  deliveryId: string;
  event: string;
  /** The secret, or its keys (signingKeys) when they are remembered. */
  secret: string | SigningKeys;
  /**
   * The secret rotated away most recently, while its grace period runs: webhook-signature then
   * carries its signature too, after the current one's (extensions §E1.1), so receivers still on the
   * old secret verify every attempt, retries included. X-Service-Signature stays on `secret`.
   */
  previousSecret?: string | SigningKeys | undefined;
  /** The exact body that will be sent (see serializePayload), as text or as its UTF-8 bytes. */
  body: string | Buffer;
  /** When this attempt is sent. It changes per attempt, unlike the body's event timestamp. */
  timestamp: Date;
}

/** Every header of one delivery attempt (interface §6 Delivery request, plus Standard Webhooks). */
export function buildDeliveryHeaders(input: DeliveryHeadersInput): Record<string, string> {
  const unixSeconds = Math.floor(input.timestamp.getTime() / 1000);
  if (!Number.isFinite(unixSeconds)) throw new RangeError("Invalid delivery timestamp");
  // The body's bytes once, for both signatures (and the request, when the caller passes them).
  const body = typeof input.body === "string" ? Buffer.from(input.body, "utf8") : input.body;
  const keys = typeof input.secret === "string" ? signingKeys(input.secret) : input.secret;
  const previous = typeof input.previousSecret === "string" ? signingKeys(input.previousSecret) : input.previousSecret;
  const standard = (key: Buffer): string => standardWebhookSignature(key, input.deliveryId, unixSeconds, body);
  return {
    "Content-Type": "application/json",
    "User-Agent": DELIVERY_USER_AGENT,
    "X-Service-Signature": SERVICE_SIGNATURE_SCHEME + serviceSignatureUnder(keys.service, body),
    "X-Service-Event": input.event,
    "X-Service-Delivery-Id": input.deliveryId,
    "webhook-id": input.deliveryId,
    "webhook-timestamp": String(unixSeconds),
    "webhook-signature": previous === undefined ? standard(keys.standard) : `${standard(keys.standard)} ${standard(previous.standard)}`,
  };
}
