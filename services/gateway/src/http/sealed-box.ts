// Authenticated encryption of what the gateway keeps at rest (stored idempotent answers): AES-256-GCM (@crm/crypto)
// under a key derived from configuration, with associated data binding each value to where it is
// stored, so a value copied under another business's or another key's entry does not open.
import { createHash, createHmac } from "node:crypto";
import { deriveKey, GCM_IV_BYTES, GCM_TAG_BYTES, gcmOpen, gcmSeal } from "@crm/crypto";

export class SealedBox {
  private readonly key: Buffer;
  private readonly macKey: Buffer;
  /** Names the key a value was sealed with (a hash of it, never the key), to tell "another key" from "tampered". */
  readonly keyId: string;

  /** `secret` is the configured string (IDEMPOTENCY_ENCRYPTION_KEY); keys are derived per purpose with HKDF. */
  constructor(secret: string, purpose: string) {
    this.key = deriveKey(secret, `${purpose} aes-256-gcm`);
    this.macKey = deriveKey(secret, `${purpose} hmac-sha256`);
    this.keyId = createHash("sha256").update(this.key).digest("hex").slice(0, 16);
  }

  /** base64(iv | tag | ciphertext) */
  seal(plaintext: Buffer, associatedData: string): string {
    const { iv, tag, ciphertext } = gcmSeal(this.key, plaintext, associatedData);
    return Buffer.concat([iv, tag, ciphertext]).toString("base64");
  }

  /** The plaintext, or undefined when the value was not sealed by this key for this associated data. */
  open(sealed: string, associatedData: string): Buffer | undefined {
    const bytes = Buffer.from(sealed, "base64");
    if (bytes.length < GCM_IV_BYTES + GCM_TAG_BYTES) return undefined;
    const iv = bytes.subarray(0, GCM_IV_BYTES);
    const tag = bytes.subarray(GCM_IV_BYTES, GCM_IV_BYTES + GCM_TAG_BYTES);
    return gcmOpen(this.key, { iv, tag, ciphertext: bytes.subarray(GCM_IV_BYTES + GCM_TAG_BYTES) }, associatedData);
  }

  /** A keyed digest: stored fingerprints of request bodies (which may hold passwords) are not plain hashes. */
  mac(...parts: Array<string | Buffer>): string {
    const hmac = createHmac("sha256", this.macKey);
    for (const part of parts) hmac.update(part).update("\0");
    return hmac.digest("hex");
  }
}
