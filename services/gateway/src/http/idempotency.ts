// Idempotency-Key on POST (decisions §7): the first response for a key is kept 24 h per business and
// replayed for the same request; the same key with a different request is 409002. Only completed
// answers below 500 are kept, so a failed attempt can be retried with the same key.
import { createHash } from "node:crypto";
import type { Request } from "express";
import { AppError } from "@crm/errors";
import type { KvStore } from "@crm/kv-store";
import type { UpstreamResponse } from "./forwarder";

const TTL_MS = 24 * 60 * 60 * 1000;
const IN_FLIGHT_TTL_MS = 60_000;
const WAIT_FOR_IN_FLIGHT_MS = 10_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

interface Stored {
  fingerprint: string;
  response?: { status: number; headers: Record<string, string | string[]>; body: string };
}

export type IdempotentOutcome = { replay: UpstreamResponse } | { proceed: (response: UpstreamResponse) => Promise<void>; abandon: () => Promise<void> };

export class IdempotencyStore {
  constructor(private readonly kv: KvStore) {}

  /** For a POST with an Idempotency-Key by a known business; undefined when the header is absent. */
  async begin(req: Request, businessId: string): Promise<IdempotentOutcome | undefined> {
    const key = req.get("idempotency-key");
    if (key === undefined) return undefined;
    if (!KEY_SHAPE.test(key)) {
      throw new AppError(400001, [{ path: "Idempotency-Key", message: "Must be 1 to 255 printable ASCII characters" }]);
    }
    const kvKey = `idempotency:${businessId}:${createHash("sha256").update(key).digest("hex")}`;
    const fingerprint = createHash("sha256")
      .update(req.method)
      .update("\0")
      .update(req.originalUrl)
      .update("\0")
      .update(req.rawBody ?? Buffer.alloc(0))
      .digest("hex");

    const deadline = Date.now() + WAIT_FOR_IN_FLIGHT_MS;
    for (;;) {
      if (await this.kv.setIfAbsent(kvKey, JSON.stringify({ fingerprint } satisfies Stored), IN_FLIGHT_TTL_MS)) {
        return {
          proceed: async (response) => {
            if (response.status >= 500) return this.kv.del(kvKey);
            const stored: Stored = { fingerprint, response: { status: response.status, headers: response.headers, body: response.body.toString("base64") } };
            await this.kv.set(kvKey, JSON.stringify(stored), TTL_MS);
          },
          abandon: () => this.kv.del(kvKey),
        };
      }
      const raw = await this.kv.get(kvKey);
      if (raw === null) continue; // expired or abandoned between the two calls: try to take it
      const stored = JSON.parse(raw) as Stored;
      if (stored.fingerprint !== fingerprint) throw new AppError(409002);
      if (stored.response) {
        const { status, headers, body } = stored.response;
        return { replay: { status, headers: { ...headers, "idempotent-replayed": "true" }, body: Buffer.from(body, "base64") } };
      }
      // The first request with this key is still running: wait for its answer rather than run twice.
      if (Date.now() > deadline) {
        throw new AppError(409002, [{ path: "Idempotency-Key", message: "A request with this key is still in progress" }]);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
