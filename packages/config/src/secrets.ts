import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/**
 * A secret that must survive restarts in single-machine mode (JWT signing key, internal token key):
 * the configured value when given, else one generated once and kept under DATA_DIR with mode 0600.
 * The `wx` flag makes concurrent first starts agree on one value.
 */
export function loadOrCreateSecret(configured: string | undefined, dataDir: string, name: string): string {
  if (configured) return configured;
  const file = path.resolve(dataDir, "secrets", name);
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(file, randomBytes(48).toString("base64url"), { flag: "wx", mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  return readFileSync(file, "utf8").trim();
}
