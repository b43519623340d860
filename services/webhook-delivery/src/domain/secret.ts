import { randomBytes } from "node:crypto";

/** Literal prefix every webhook secret starts with (interface §2, Webhook.secret). */
export const WEBHOOK_SECRET_PREFIX = "whsec_";

/** Length of `secretPrefix`, the same 12 characters API keys use for `keyPrefix` (decisions §5). */
export const SECRET_PREFIX_LENGTH = 12;

/**
 * A new signing secret: `whsec_` + standard base64 of 32 CSPRNG bytes. The base64 part is also the
 * Standard Webhooks key format, so receivers can verify either signature with the same secret.
 */
export function generateWebhookSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(32).toString("base64");
}

/** The short identifying prefix shown after creation (`secretPrefix`), never enough to sign with. */
export function secretPrefix(secret: string): string {
  return secret.slice(0, SECRET_PREFIX_LENGTH);
}
