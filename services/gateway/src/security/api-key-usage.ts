// `lastUsedAt` of API keys (extensions §E3) without a write per request: each authenticated use only
// notes the key's id and time in memory here; every flush interval the gateway reports the latest use
// per key to identity in one call, which writes them in one statement. On shutdown it flushes once more.
import { API_KEY_USE_REPORT_MAX } from "@crm/auth-cache";
import type { Logger } from "@crm/logger";

export interface ApiKeyUse {
  id: string;
  at: string;
  /** The client address of that use (`lastUsedIp`). */
  ip: string;
}

/** Distinct keys noted before a flush is started early, so memory stays bounded under any traffic. */
const EARLY_FLUSH_AT = 10 * API_KEY_USE_REPORT_MAX;

export class ApiKeyUsage {
  /** Key id -> epoch ms and client address of its latest use since the last report. */
  private pending = new Map<string, { at: number; ip: string }>();
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly report: (uses: ApiKeyUse[]) => Promise<void>,
    intervalMs: number,
    private readonly logger: Pick<Logger, "warn">,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => void this.flush(), intervalMs);
    this.timer.unref();
  }

  /** The request path's whole cost: one Map write. */
  record(apiKeyId: string, ip: string): void {
    this.pending.set(apiKeyId, { at: this.now(), ip });
    if (this.pending.size >= EARLY_FLUSH_AT) void this.flush();
  }

  /** Reports what was noted since the last report; a failed report is kept for the next one. */
  flush(): Promise<void> {
    if (!this.flushing && this.pending.size > 0) {
      this.flushing = this.send().finally(() => {
        this.flushing = undefined;
      });
    }
    return this.flushing ?? Promise.resolve();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushing;
    await this.flush();
  }

  private async send(): Promise<void> {
    const batch = this.pending;
    this.pending = new Map();
    const uses = [...batch].map(([id, { at, ip }]) => ({ id, at: new Date(at).toISOString(), ip }));
    for (let start = 0; start < uses.length; start += API_KEY_USE_REPORT_MAX) {
      const chunk = uses.slice(start, start + API_KEY_USE_REPORT_MAX);
      try {
        await this.report(chunk);
      } catch (err) {
        // Kept for the next flush (unless a newer use of the key was noted meanwhile).
        for (const use of uses.slice(start)) {
          const at = Date.parse(use.at);
          if ((this.pending.get(use.id)?.at ?? 0) < at) this.pending.set(use.id, { at, ip: use.ip });
        }
        this.logger.warn({ err, keys: uses.length - start }, "could not report API key use to identity; will retry");
        return;
      }
    }
  }
}
