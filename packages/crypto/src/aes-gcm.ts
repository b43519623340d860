// AES-256-GCM with associated data, the one authenticated encryption the platform uses for values it
// keeps at rest (the gateway's stored idempotent answers, webhook-delivery's signing secrets). Each
// caller keeps its own stored format and key naming; the cipher, its sizes and the tag check are here.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

export const GCM_IV_BYTES = 12;
export const GCM_TAG_BYTES = 16;

/** The three parts of a sealed value; how they are laid out in storage is the caller's format. */
export interface GcmSealed {
  iv: Buffer;
  ciphertext: Buffer;
  tag: Buffer;
}

/** `bytes` of key material derived from configured text (or another key) with HKDF-SHA256, no salt; `info` names the purpose. */
export function deriveKey(secret: string | Buffer, info: string, bytes = 32): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), info, bytes));
}

/** A fresh random IV per value: never reuse one under a key. */
export function gcmSeal(key: Buffer, plaintext: Buffer | string, associatedData: Buffer | string): GcmSealed {
  const iv = randomBytes(GCM_IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: GCM_TAG_BYTES });
  cipher.setAAD(typeof associatedData === "string" ? Buffer.from(associatedData, "utf8") : associatedData);
  const ciphertext = Buffer.concat([typeof plaintext === "string" ? cipher.update(plaintext, "utf8") : cipher.update(plaintext), cipher.final()]);
  return { iv, ciphertext, tag: cipher.getAuthTag() };
}

/**
 * The plaintext, or undefined when the parts have the wrong sizes or the tag does not check: another
 * key, other associated data (the value was moved) or a flipped bit look the same from here.
 */
export function gcmOpen(key: Buffer, sealed: GcmSealed, associatedData: Buffer | string): Buffer | undefined {
  if (sealed.iv.length !== GCM_IV_BYTES || sealed.tag.length !== GCM_TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, sealed.iv, { authTagLength: GCM_TAG_BYTES });
    decipher.setAAD(typeof associatedData === "string" ? Buffer.from(associatedData, "utf8") : associatedData);
    decipher.setAuthTag(sealed.tag);
    return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]);
  } catch {
    return undefined;
  }
}
