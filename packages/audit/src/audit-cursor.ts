// Audit cursors: opaque, encrypted and authenticated like the record lists' and the feed's (AES-256-GCM
// under a key derived from INTERNAL_TOKEN_SECRET, which every gateway and service of a deployment share).
// A cursor holds its query's filters and the position of the last entry of its page; the business and
// the scope (the whole log, or one record's history) are the associated data, so a cursor the product
// did not make, altered, or made for another business or record is 400019, never followed.
import { deriveKey, gcmOpen, gcmSeal, GCM_IV_BYTES, GCM_TAG_BYTES } from "@crm/crypto";
import { errors } from "@crm/errors";
import type { AuditFilters, AuditPosition } from "./audit-query";

const VERSION = 1;
const KEY_CONTEXT = "audit log cursor v1 (AES-256-GCM)";

export interface AuditCursorState {
  filters: AuditFilters;
  after: AuditPosition;
}

export class AuditCursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = deriveKey(secret, KEY_CONTEXT);
  }

  /** `scope`: "log", or "history:<entity>:<id>". */
  encode(businessId: string, scope: string, state: AuditCursorState): string {
    const plain = JSON.stringify({ f: state.filters, t: state.after.occurredAt, i: state.after.id });
    const { iv, ciphertext, tag } = gcmSeal(this.key, plain, associatedData(businessId, scope));
    return Buffer.concat([Buffer.of(VERSION), iv, ciphertext, tag]).toString("base64url");
  }

  /** The state, or 400019 for anything this codec did not make for `businessId` and `scope`. */
  decode(businessId: string, scope: string, cursor: unknown): AuditCursorState {
    const bytes = typeof cursor === "string" && /^[A-Za-z0-9_-]{1,2000}$/.test(cursor) ? Buffer.from(cursor, "base64url") : Buffer.alloc(0);
    if (bytes.length < 1 + GCM_IV_BYTES + 1 + GCM_TAG_BYTES || bytes[0] !== VERSION) throw invalid();
    const opened = gcmOpen(
      this.key,
      { iv: bytes.subarray(1, 1 + GCM_IV_BYTES), ciphertext: bytes.subarray(1 + GCM_IV_BYTES, bytes.length - GCM_TAG_BYTES), tag: bytes.subarray(bytes.length - GCM_TAG_BYTES) },
      associatedData(businessId, scope),
    );
    if (!opened) throw invalid();
    const state = JSON.parse(opened.toString("utf8")) as { f: AuditFilters; t: string; i: string };
    return { filters: state.f, after: { occurredAt: state.t, id: state.i } };
  }
}

function associatedData(businessId: string, scope: string): string {
  return `${VERSION}\u0000${businessId}\u0000${scope}`;
}

function invalid() {
  return errors.invalidQuery([{ path: "cursor", message: "Not a cursor of this list: use a nextCursor an earlier page answered" }]);
}
