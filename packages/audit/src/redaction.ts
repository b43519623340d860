// Extensions §E7: passwords, key material and webhook secrets never appear in an entry. Whatever an
// entry is made from (a user row, a key, a webhook, a body), a field of one of these names is replaced,
// at any depth, before the entry is written: the rule is the field's name, so a new secret field is
// one word here. Except under `customFields`: those names are a business's own (a custom field may be
// called `token` or `key`), its values are record data every read returns, and a record's `changes`
// must stay identical to its `previousAttributes`.
import { AUDIT_REDACTED } from "@crm/contracts";

/** Where a business names the fields (extensions §E4): kept as it is, whatever the names. */
const BUSINESS_NAMED_FIELDS = "customFields";

const SECRET_FIELDS = new Set(["password", "currentPassword", "passwordHash", "key", "keyDigest", "apiKey", "secret", "previousSecret", "accessToken", "refreshToken", "token"]);

/** Whether a field of this name holds a secret. */
export function isSecretField(name: string): boolean {
  return SECRET_FIELDS.has(name);
}

/** `value` with every secret field's value replaced by "[REDACTED]" (a new object; the input is not touched). */
export function redactSecrets<T>(value: T): T {
  if (Array.isArray(value)) return value.map((item) => redactSecrets(item)) as T;
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value as Record<string, unknown>)) {
    if (name === BUSINESS_NAMED_FIELDS) out[name] = field;
    else out[name] = isSecretField(name) && field !== null && field !== undefined ? AUDIT_REDACTED : redactSecrets(field);
  }
  return out as T;
}
