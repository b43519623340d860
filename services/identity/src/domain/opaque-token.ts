import { createHash, randomBytes } from "node:crypto";

/** A refresh token: 256 random bits, URL-safe. */
export function newRefreshToken(): string {
  return randomBytes(32).toString("base64url");
}

/** Refresh tokens are stored and looked up only by this digest. */
export function digestToken(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}
