import { deriveKey, GCM_IV_BYTES, GCM_TAG_BYTES, gcmOpen, gcmSeal } from "@crm/crypto";
import { WEBHOOK_SECRET_PREFIX } from "./secret";

/**
 * Signing secrets at rest: AES-256-GCM (@crm/crypto) under a key from configuration (WEBHOOK_SECRET_KEYS), with the
 * webhook id as associated data, so a stored value is useless without the key and cannot be copied
 * onto another webhook. Stored form: `v1:<keyId>:<iv>:<ciphertext>:<tag>` (base64url parts), where
 * keyId names the key (a fingerprint of it, never enough to recover it). A value that still starts with
 * `whsec_` is a row from before encryption: readable, and re-encrypted by the re-encryption job.
 */
const FORMAT_VERSION = "v1";
/** Key text shorter than this has too little entropy to derive a 256-bit key from. */
export const MIN_KEY_LENGTH = 32;

export interface KeyringKey {
  /** 8 hex characters derived from the key, written into every value sealed with it. */
  id: string;
  key: Buffer;
}

/** Why a stored secret cannot be opened; the message never contains any part of the secret. */
export class UnreadableSecretError extends Error {
  constructor(
    readonly reason: "unknown-key" | "malformed" | "tampered",
    readonly keyId: string | null,
  ) {
    super(`Webhook secret cannot be decrypted (${reason}${keyId ? `, key ${keyId}` : ""})`);
    this.name = "UnreadableSecretError";
  }
}

/** Derives the AES key (and its id) from configured key text; HKDF spreads any text's entropy over 32 bytes. */
export function keyFromText(text: string): KeyringKey {
  const key = deriveKey(text, "crm webhook-delivery secret encryption");
  const id = deriveKey(key, "crm webhook-delivery key id", 4).toString("hex");
  return { id, key };
}

export class SecretKeyring {
  private readonly byId: ReadonlyMap<string, Buffer>;
  /** The key every new or re-encrypted secret is sealed with. */
  readonly current: KeyringKey;

  /** `keyTexts[0]` writes; every key reads. */
  constructor(keyTexts: readonly string[]) {
    const keys = keyTexts.map(keyFromText);
    if (keys.length === 0) throw new Error("SecretKeyring needs at least one key");
    this.current = keys[0]!;
    this.byId = new Map(keys.map((k) => [k.id, k.key]));
  }

  get keyIds(): string[] {
    return [...this.byId.keys()];
  }

  /** The key id a stored value is sealed with; null for a plaintext row from before encryption. */
  static keyIdOf(stored: string): string | null {
    if (stored.startsWith(WEBHOOK_SECRET_PREFIX)) return null;
    return stored.split(":")[1] ?? null;
  }

  /** True when the value is not yet sealed with the current key (plaintext, or an older key). */
  needsReencryption(stored: string): boolean {
    return SecretKeyring.keyIdOf(stored) !== this.current.id;
  }

  seal(webhookId: string, secret: string): string {
    const { iv, ciphertext, tag } = gcmSeal(this.current.key, secret, associatedData(this.current.id, webhookId));
    return [FORMAT_VERSION, this.current.id, b64(iv), b64(ciphertext), b64(tag)].join(":");
  }

  /** The secret itself, only to sign with. Throws UnreadableSecretError for an unknown key or any tampering. */
  open(webhookId: string, stored: string): string {
    if (stored.startsWith(WEBHOOK_SECRET_PREFIX)) return stored;
    const parts = stored.split(":");
    const [version, keyId, iv, ciphertext, tag] = parts;
    if (parts.length !== 5 || version !== FORMAT_VERSION || !keyId || !iv || !ciphertext || !tag) {
      throw new UnreadableSecretError("malformed", null);
    }
    const key = this.byId.get(keyId);
    if (!key) throw new UnreadableSecretError("unknown-key", keyId);
    const ivBytes = unb64(iv);
    const tagBytes = unb64(tag);
    if (ivBytes.length !== GCM_IV_BYTES || tagBytes.length !== GCM_TAG_BYTES) throw new UnreadableSecretError("malformed", keyId);
    const opened = gcmOpen(key, { iv: ivBytes, ciphertext: unb64(ciphertext), tag: tagBytes }, associatedData(keyId, webhookId));
    // GCM's tag check: another webhook's value, a flipped bit, or the wrong key under a colliding id.
    if (!opened) throw new UnreadableSecretError("tampered", keyId);
    return opened.toString("utf8");
  }
}

/** Binds a value to its webhook (and to the format and key it claims), so it cannot be moved. */
function associatedData(keyId: string, webhookId: string): Buffer {
  return Buffer.from(`${FORMAT_VERSION}:${keyId}:${webhookId}`, "utf8");
}

function b64(bytes: Buffer): string {
  return bytes.toString("base64url");
}

function unb64(text: string): Buffer {
  return Buffer.from(text, "base64url");
}

/**
 * `keyring.open` for the attempts, remembering the last `limit` secrets it opened: a stored value
 * opens to the same secret every time (it is bound to its webhook and names its key), so a webhook's
 * attempts decrypt it once, not once each. AES-GCM's open was the largest of webhook-delivery's own
 * costs per attempt in a profile (docs/performance.md, D28). A value that cannot be opened
 * is not remembered: each attempt throws (and logs) again. `derive` turns the secret into what is
 * kept (the attempts keep its signing keys), once per opening. A `limit` of 0 keeps none: every open
 * goes to the keyring (WEBHOOK_KEPT_SECRETS=false turns D28 off so).
 */
export class OpenedSecrets<T = string> {
  /** By stored value (its hash is the string's, computed once per string), with the webhook it opened for. */
  private readonly opened = new Map<string, { webhookId: string; value: T }>();

  constructor(
    private readonly keyring: Pick<SecretKeyring, "open">,
    private readonly limit = 1_000,
    private readonly derive: (secret: string) => T = (secret) => secret as T,
  ) {}

  open(webhookId: string, stored: string): T {
    const known = this.opened.get(stored);
    // Only for the webhook it was opened for: another webhook's value goes to the keyring, which refuses it.
    if (known !== undefined && known.webhookId === webhookId) return known.value;
    const value = this.derive(this.keyring.open(webhookId, stored));
    if (this.limit === 0) return value;
    // Oldest first out: a Map iterates in insertion order.
    if (known === undefined && this.opened.size >= this.limit) this.opened.delete(this.opened.keys().next().value!);
    this.opened.set(stored, { webhookId, value });
    return value;
  }
}
