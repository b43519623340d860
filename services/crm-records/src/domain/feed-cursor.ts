// Change-feed cursors (extensions §E6): opaque, encrypted like list cursors (issue 35 item 12), bound
// to the business as associated data, so a cursor the product did not make, altered, or another
// business's is 400019, never followed. What one holds: a feed position.
import { deriveKey, gcmOpen, gcmSeal, GCM_IV_BYTES, GCM_TAG_BYTES } from "@crm/crypto";
import { errors } from "@crm/errors";

const VERSION = 1;
const KEY_CONTEXT = "crm-records change feed cursor v1 (AES-256-GCM)";

export class FeedCursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = deriveKey(secret, KEY_CONTEXT);
  }

  encode(businessId: string, position: bigint): string {
    const { iv, ciphertext, tag } = gcmSeal(this.key, position.toString(), associatedData(businessId));
    return Buffer.concat([Buffer.of(VERSION), iv, ciphertext, tag]).toString("base64url");
  }

  /** The position, or 400019 for anything this codec did not make for `businessId`. */
  decode(businessId: string, cursor: string): bigint {
    const bytes = /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, "base64url") : Buffer.alloc(0);
    if (bytes.length < 1 + GCM_IV_BYTES + 1 + GCM_TAG_BYTES || bytes[0] !== VERSION) throw invalid();
    const opened = gcmOpen(
      this.key,
      { iv: bytes.subarray(1, 1 + GCM_IV_BYTES), ciphertext: bytes.subarray(1 + GCM_IV_BYTES, bytes.length - GCM_TAG_BYTES), tag: bytes.subarray(bytes.length - GCM_TAG_BYTES) },
      associatedData(businessId),
    );
    const text = opened?.toString("utf8");
    if (text === undefined || !/^\d{1,19}$/.test(text)) throw invalid();
    return BigInt(text);
  }
}

function associatedData(businessId: string): string {
  return `${VERSION}\u0000${businessId}`;
}

function invalid() {
  return errors.invalidQuery([{ path: "after", message: "Not a cursor of this feed: use a nextCursor the feed answered" }]);
}
