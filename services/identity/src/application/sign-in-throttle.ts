// Sign-in abuse control (policy in ../../README.md). Failures are counted per (email, client
// address) in the shared key-value store, so every identity instance sees the same counts. Keys
// hold digests, never the email itself.
import { createHash } from "node:crypto";
import type { KvStore } from "@crm/kv-store";

export interface ThrottlePolicy {
  maxFailures: number;
  windowMs: number;
  lockBaseMs: number;
  lockMaxMs: number;
}

export class SignInThrottle {
  constructor(
    private readonly kv: KvStore,
    private readonly policy: ThrottlePolicy,
    private readonly now: () => number = Date.now,
  ) {}

  private keys(emailKey: string, address: string) {
    const id = createHash("sha256").update(`${emailKey}\n${address}`).digest("hex");
    return { failures: `signin:fail:${id}`, lock: `signin:lock:${id}` };
  }

  /** Milliseconds until the pair may try again; 0 when it is not locked. */
  async lockedFor(emailKey: string, address: string): Promise<number> {
    const until = Number(await this.kv.get(this.keys(emailKey, address).lock));
    return Number.isFinite(until) && until > this.now() ? until - this.now() : 0;
  }

  /**
   * Counts a failure. From the maxFailures-th failure in the window on, the pair is locked for
   * lockBaseMs, doubling with every further failure, capped at lockMaxMs; the count itself expires
   * with its window, so a lock never outlives window + lockMaxMs after the last failure.
   */
  async recordFailure(emailKey: string, address: string): Promise<void> {
    const keys = this.keys(emailKey, address);
    const { value } = await this.kv.increment(keys.failures, this.policy.windowMs);
    if (value < this.policy.maxFailures) return;
    const exponent = Math.min(value - this.policy.maxFailures, 30);
    const lockMs = Math.min(this.policy.lockBaseMs * 2 ** exponent, this.policy.lockMaxMs);
    await this.kv.set(keys.lock, String(this.now() + lockMs), lockMs);
  }

  async recordSuccess(emailKey: string, address: string): Promise<void> {
    const keys = this.keys(emailKey, address);
    await this.kv.del(keys.failures, keys.lock);
  }
}
