// Memory-hard password hashing (scrypt). The parameters travel inside the stored hash, so raising
// the cost later only affects new hashes and old ones still verify. Every hash (sign-in, sign-up,
// a user's new password, the current-password check) passes one ConcurrencyLimit: a sign-in flood
// holds at most `concurrency` of libuv's threads, and beyond its queue is answered 503000 at once.
import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from "node:crypto";
import { errors } from "@crm/errors";
import { ConcurrencyLimit, QueueFull } from "./concurrency-limit";

const KEY_LENGTH = 32;
const R = 8;
const P = 1;

function derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
  const N = 2 ** logN;
  // scrypt needs 128 * N * r bytes; Node's default maxmem (32 MiB) is below OWASP's N = 2^17.
  const options: ScryptOptions = { N, r, p, maxmem: 128 * N * r + 16 * 1024 * 1024 };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, KEY_LENGTH, options, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

/** How many hashes run at once, and how many may wait (PASSWORD_HASH_CONCURRENCY, PASSWORD_HASH_QUEUE). */
export interface HashingBounds {
  concurrency: number;
  queue: number;
}

export class PasswordHasher {
  private dummy: Promise<string> | undefined;
  private readonly limit: ConcurrencyLimit;

  constructor(
    private readonly logN: number,
    bounds: HashingBounds,
  ) {
    this.limit = new ConcurrencyLimit(bounds.concurrency, bounds.queue);
  }

  /** scrypt through the limit; a full queue is 503000 with Retry-After, and nothing is hashed. */
  private async derive(password: string, salt: Buffer, logN: number, r: number, p: number): Promise<Buffer> {
    try {
      return await this.limit.run(() => derive(password, salt, logN, r, p));
    } catch (err) {
      if (err instanceof QueueFull) throw errors.unavailable(undefined, { retryAfterS: Math.max(1, err.retryAfterMs / 1000) });
      throw err;
    }
  }

  async hash(password: string): Promise<string> {
    const salt = randomBytes(16);
    const key = await this.derive(password, salt, this.logN, R, P);
    return ["scrypt", this.logN, R, P, salt.toString("base64url"), key.toString("base64url")].join("$");
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const parts = stored.split("$");
    if (parts.length !== 6 || parts[0] !== "scrypt") return false;
    const [, logN, r, p, salt, expected] = parts as [string, string, string, string, string, string];
    const want = Buffer.from(expected, "base64url");
    const got = await this.derive(password, Buffer.from(salt, "base64url"), Number(logN), Number(r), Number(p));
    return got.length === want.length && timingSafeEqual(got, want);
  }

  /**
   * Spends the same work as a real check when there is no user, so a wrong email and a wrong
   * password cannot be told apart by timing.
   */
  async verifyAgainstDummy(password: string): Promise<false> {
    this.dummy ??= this.hash(randomBytes(16).toString("hex"));
    await this.verify(password, await this.dummy);
    return false;
  }
}
