// Idempotency-Key on POST (decisions §7): the first response for a key is kept 24 h per business and
// replayed for the same request by the same caller; the same key with a different request, or from
// another user or API key of the business (extensions §E10), is 409002. Only completed answers below
// 500 are kept, so a failed attempt can be retried with the same key; but a 503000 whose service says
// its write is in doubt (it may have committed: OUTCOME_IN_DOUBT_HEADER, issue 42) keeps the key as
// completed without an answer, and its retry is 409002, never a second run. A kept entry this gateway
// cannot read (another IDEMPOTENCY_ENCRYPTION_KEY, or altered in the store) is 409002 too.
//
// Kept answers include one-time secrets (a new API key's `svc_...`, a webhook's `whsec_...`), so they
// are never at rest in clear: each is sealed with AES-256-GCM under IDEMPOTENCY_ENCRYPTION_KEY, bound
// to its business, key, caller and request as associated data, and request fingerprints and callers
// are stored as keyed digests.
import { createHash } from "node:crypto";
import type { Request } from "express";
import type { Principal } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { KvStore } from "@crm/kv-store";
import type { UpstreamResponse } from "./forwarder";
import { SealedBox } from "./sealed-box";

const TTL_MS = 24 * 60 * 60 * 1000;
const IN_FLIGHT_TTL_MS = 60_000;
const WAIT_FOR_IN_FLIGHT_MS = 10_000;
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;
/** The most one kept answer may weigh (status, headers and body): bounds Redis or gateway memory per key. */
export const MAX_KEPT_RESPONSE_BYTES = 1024 * 1024;

/** Why a completed answer is not replayable: the key still refuses to run the request again. */
type Unkept = "too-large" | "not-saved" | "in-doubt" | "unanswered";

interface Stored {
  /** Keyed digest of method, URL and body. */
  fingerprint: string;
  /** Keyed digest of the caller (its API key, else its user): only that caller replays the answer. */
  caller: string;
  /** Which encryption key wrote this entry: an entry of another key cannot be read here. */
  keyId: string;
  /** The sealed answer, once there is one. */
  sealed?: string;
  unkept?: Unkept;
}

interface KeptResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: string;
}

const UNKEPT_MESSAGES: Record<Unkept, string> = {
  "too-large": `The first request with this key completed, but its answer was over ${MAX_KEPT_RESPONSE_BYTES} bytes and was not kept`,
  "not-saved": "The first request with this key completed, but its answer could not be saved",
  "in-doubt":
    "The first request with this key may have completed: the database lost its connection while saving it, and whether it was saved could not be told. It is not run again; check whether it took effect, and use a new key if it did not",
  unanswered:
    "The first request with this key may have completed: it reached the service, which did not answer. It is not run again; check whether it took effect, and use a new key if it did not",
};

const ANOTHER_CALLER = "This key was already used by another user or API key of the business; use a new key";
const UNREADABLE = "A request with this key was already made, but what was kept of it cannot be read; use a new key";

/** Who may replay an entry: the key of a request made with an API key, else the signed-in user. */
export type IdempotencyCaller = Pick<Principal, "businessId" | "userId" | "apiKeyId">;

export type IdempotentOutcome =
  | { replay: UpstreamResponse }
  | {
      proceed: (response: UpstreamResponse) => Promise<void>;
      /** The request never reached a service (or its service claims the key itself): the key is freed. */
      abandon: () => Promise<void>;
      /** The request may have reached the service, which gave no answer: the key is kept, never run twice. */
      unanswered: () => Promise<void>;
    };

export interface IdempotencyOptions {
  /** How long a request waits for the first one with its key to finish (tests shorten it). */
  waitForInFlightMs?: number;
  logger?: { error(obj: object, msg?: string): void };
}

/** The key-value store failing is the client's 503000, never a 500. */
async function kvOr503<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (cause) {
    throw errors.unavailable(undefined, { cause });
  }
}

export class IdempotencyStore {
  private readonly box: SealedBox;

  constructor(
    private readonly kv: KvStore,
    encryptionSecret: string,
    private readonly options: IdempotencyOptions = {},
  ) {
    this.box = new SealedBox(encryptionSecret, "crm idempotency v1");
  }

  /** For a POST with an Idempotency-Key by a known caller; undefined when the header is absent. */
  async begin(req: Request, principal: IdempotencyCaller): Promise<IdempotentOutcome | undefined> {
    const key = req.get("idempotency-key");
    if (key === undefined) return undefined;
    if (!KEY_SHAPE.test(key)) {
      throw errors.validationFailed([{ path: "Idempotency-Key", message: "Must be 1 to 255 printable ASCII characters" }]);
    }
    const kvKey = `idempotency:${principal.businessId}:${createHash("sha256").update(key).digest("hex")}`;
    const fingerprint = this.box.mac(req.method, req.originalUrl, req.rawBody ?? Buffer.alloc(0));
    const caller = this.box.mac(principal.apiKeyId !== null ? "apiKey" : "user", principal.apiKeyId ?? principal.userId ?? "");
    const keyId = this.box.keyId;
    // The answer only opens under this business, this key, this caller and this exact request.
    const associatedData = `${kvKey}\n${caller}\n${fingerprint}`;
    const record = (fields: Partial<Stored> = {}) => JSON.stringify({ fingerprint, caller, keyId, ...fields } satisfies Stored);

    const deadline = Date.now() + (this.options.waitForInFlightMs ?? WAIT_FOR_IN_FLIGHT_MS);
    for (;;) {
      if (await kvOr503(this.kv.setIfAbsent(kvKey, record(), IN_FLIGHT_TTL_MS))) {
        const release = () => this.release(kvKey);
        return {
          proceed: async (response) => {
            if (response.status >= 500) return response.outcomeInDoubt ? this.keepInDoubt(kvKey, record({ unkept: "in-doubt" })) : release();
            const weight = response.body.length + JSON.stringify(response.headers).length;
            const value =
              weight > MAX_KEPT_RESPONSE_BYTES
                ? record({ unkept: "too-large" })
                : record({
                    sealed: this.box.seal(
                      Buffer.from(JSON.stringify({ status: response.status, headers: response.headers, body: response.body.toString("base64") } satisfies KeptResponse)),
                      associatedData,
                    ),
                  });
            try {
              await this.kv.set(kvKey, value, TTL_MS);
            } catch (cause) {
              // The request ran but its answer is lost. Answer 503000, and mark the key as completed
              // (a small write that may still succeed) so a retry is refused rather than run twice;
              // if that fails too, the in-flight marker stays and expires after IN_FLIGHT_TTL_MS.
              await this.kv.set(kvKey, record({ unkept: "not-saved" }), TTL_MS).catch((err: unknown) => {
                this.options.logger?.error({ err }, "idempotency: could not mark an unsaved answer");
              });
              throw errors.unavailable(undefined, { cause });
            }
          },
          abandon: release,
          unanswered: () => this.keepInDoubt(kvKey, record({ unkept: "unanswered" })),
        };
      }
      const raw = await kvOr503(this.kv.get(kvKey));
      if (raw === null) continue; // expired or abandoned between the two calls: try to take it
      const stored = parseStored(raw);
      // Another IDEMPOTENCY_ENCRYPTION_KEY (gateways sharing a Redis with different keys), or not an
      // entry at all: whether the request ran cannot be told, so it must not run (again).
      if (stored?.keyId !== keyId) throw this.unreadable(kvKey, stored ? "written under another IDEMPOTENCY_ENCRYPTION_KEY" : "not an entry");
      // Before anything else of the entry: another caller learns nothing of the first request or answer.
      if (stored.caller !== caller) throw errors.idempotencyKeyReused([{ path: "Idempotency-Key", message: ANOTHER_CALLER }]);
      if (stored.fingerprint !== fingerprint) throw errors.idempotencyKeyReused();
      if (stored.unkept) throw errors.idempotencyKeyReused([{ path: "Idempotency-Key", message: UNKEPT_MESSAGES[stored.unkept] }]);
      if (stored.sealed !== undefined) {
        const opened = this.box.open(stored.sealed, associatedData);
        // Only someone writing to the store itself can cause this: the store is not to be trusted.
        if (!opened) throw this.unreadable(kvKey, "failed authentication");
        const { status, headers, body } = JSON.parse(opened.toString("utf8")) as KeptResponse;
        return { replay: { status, headers: { ...headers, "idempotent-replayed": "true" }, body: Buffer.from(body, "base64") } };
      }
      // The first request with this key is still running: wait for its answer rather than run twice.
      if (Date.now() > deadline) {
        throw errors.idempotencyKeyReused([{ path: "Idempotency-Key", message: "A request with this key is still in progress" }]);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** 409002 for an entry that exists but cannot be read; the operator learns why from the log. */
  private unreadable(kvKey: string, why: string) {
    this.options.logger?.error({ entry: kvKey, why }, "idempotency: an entry cannot be read; its request is refused, not run again");
    return errors.idempotencyKeyReused([{ path: "Idempotency-Key", message: UNREADABLE }]);
  }

  /**
   * A write whose outcome is in doubt: the key is kept as completed without an answer, so a retry is
   * refused (409002) rather than run a second time. The client gets the service's 503000 either way;
   * if the store fails, the in-flight marker stays and expires after IN_FLIGHT_TTL_MS.
   */
  private async keepInDoubt(kvKey: string, value: string): Promise<void> {
    await this.kv.set(kvKey, value, TTL_MS).catch((err: unknown) => this.options.logger?.error({ err }, "idempotency: could not keep a key whose write is in doubt"));
  }

  /** Frees the key after a 5xx or a failed forward; if the store fails, the marker expires on its own. */
  private async release(kvKey: string): Promise<void> {
    await this.kv.del(kvKey).catch((err: unknown) => this.options.logger?.error({ err }, "idempotency: could not release a key"));
  }
}

/** A stored entry, or undefined when the value is not one (written by something else, or corrupted). */
function parseStored(raw: string): Stored | undefined {
  try {
    const value = JSON.parse(raw) as Partial<Stored> | null;
    return typeof value?.keyId === "string" && typeof value.caller === "string" && typeof value.fingerprint === "string" ? (value as Stored) : undefined;
  } catch {
    return undefined;
  }
}
