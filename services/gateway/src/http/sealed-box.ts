// Authenticated encryption of what the gateway keeps at rest (stored idempotent answers): AES-256-GCM
// under a key derived from configuration, with associated data binding each value to where it is
// stored, so a value copied under another business's or another key's entry does not open.
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from "node:crypto";

const IV_BYTES = 12;
const TAG_BYTES = 16;

export class SealedBox {
  private readonly key: Buffer;
  private readonly macKey: Buffer;
  /** Names the key a value was sealed with (a hash of it, never the key), to tell "another key" from "tampered". */
  readonly keyId: string;

  /** `secret` is the configured string (IDEMPOTENCY_ENCRYPTION_KEY); keys are derived per purpose with HKDF. */
  constructor(secret: string, purpose: string) {
    this.key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), `${purpose} aes-256-gcm`, 32));
    this.macKey = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), `${purpose} hmac-sha256`, 32));
    this.keyId = createHash("sha256").update(this.key).digest("hex").slice(0, 16);
  }

  /** base64(iv | tag | ciphertext) */
  seal(plaintext: Buffer, associatedData: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    cipher.setAAD(Buffer.from(associatedData, "utf8"));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64");
  }

  /** The plaintext, or undefined when the value was not sealed by this key for this associated data. */
  open(sealed: string, associatedData: string): Buffer | undefined {
    const bytes = Buffer.from(sealed, "base64");
    if (bytes.length < IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, bytes.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(associatedData, "utf8"));
      decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      return undefined;
    }
  }

  /** A keyed digest: stored fingerprints of request bodies (which may hold passwords) are not plain hashes. */
  mac(...parts: Array<string | Buffer>): string {
    const hmac = createHmac("sha256", this.macKey);
    for (const part of parts) hmac.update(part).update("\0");
    return hmac.digest("hex");
  }
}
