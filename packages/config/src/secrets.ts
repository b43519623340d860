import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * The secrets generated under DATA_DIR/secrets when not configured, and their file names. Services
 * that must agree on one (identity and the gateway on the JWT key, all four on the internal token key)
 * read the same file through the same name here.
 */
export const generatedSecretFiles = {
  jwt: "jwt-secret",
  internalToken: "internal-token-secret",
  idempotencyKey: "idempotency-encryption-key",
  webhookSecretKey: "webhook-secret-key",
} as const;

export type GeneratedSecret = keyof typeof generatedSecretFiles;

/**
 * A secret that must survive restarts in single-machine mode (JWT signing key, internal token key):
 * the configured value when given, else one generated once and kept under DATA_DIR with mode 0600.
 * The `wx` flag makes concurrent first starts agree on one value.
 */
export function loadOrCreateSecret(configured: string | undefined, dataDir: string, secret: GeneratedSecret): string {
  if (configured) return configured;
  const file = path.resolve(dataDir, "secrets", generatedSecretFiles[secret]);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, randomBytes(48).toString("base64url"), { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return readFileSync(file, "utf8").trim();
}
