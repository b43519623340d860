import { createHash, randomInt } from "node:crypto";

/** `svc_` + 40 base62 characters (decisions §5). */
export const API_KEY_PREFIX = "svc_";
export const API_KEY_PATTERN = /^svc_[A-Za-z0-9]{40}$/;
/** Characters of the key kept in clear for identification. */
export const API_KEY_VISIBLE_CHARS = 12;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A new key from the CSPRNG; randomInt is unbiased, so every character carries log2(62) bits. */
export function generateApiKey(): string {
  let out = API_KEY_PREFIX;
  for (let i = 0; i < 40; i++) out += BASE62[randomInt(62)];
  return out;
}

/** The only form in which a key is stored or cached: lowercase hex SHA-256. */
export function digestApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

/** Whether a presented credential is an API key rather than a JWT (interface §5 rule 5). */
export function looksLikeApiKey(credential: string): boolean {
  return credential.startsWith(API_KEY_PREFIX);
}
