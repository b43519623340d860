// Cursors of record lists (extensions §E2.1): an opaque token holding the query's `where` and
// `orderBy` exactly as the client wrote them and the sort key of the last record returned (an email,
// a name: record data that travels in URLs, proxies' logs and browser histories). So it is encrypted,
// not only signed (issue 35 item 12): AES-256-GCM under a key derived from the service's internal
// token secret, the business and the entity bound in as associated data. A cursor that was altered,
// made with another secret, or made for another business or entity fails authentication and is refused
// (400019) rather than followed; nothing of what it holds can be read without the secret.
//
// base64url( version (1 byte) | nonce (12 bytes, random) | ciphertext of the JSON state | tag (16 bytes) ).
// A random 96-bit nonce per cursor keeps a nonce reused under one key improbable for the first 2^32
// cursors of a secret (NIST SP 800-38D); rotating INTERNAL_TOKEN_SECRET starts a new key.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";
import { type DeletedMode, deletedModes, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";

const VERSION = 2;
/** Separates this use of the secret from every other (the internal tokens are signed with it too). */
const KEY_CONTEXT = "crm-records list cursor v2 (AES-256-GCM)";
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export interface CursorState {
  businessId: string;
  entity: RecordEntity;
  /** The list's `where` and `orderBy` parameters as written; undefined when absent. */
  where: string | undefined;
  orderBy: string | undefined;
  /** Which records the list reads (extensions §E5); a walk stays in the mode it started in. */
  deleted: DeletedMode;
  /** The values of the (parsed) orderBy fields on the last record of the page, id last. */
  key: unknown[];
}

/** What the ciphertext holds; the business and entity are the associated data, not repeated inside. */
interface Payload {
  w?: string;
  o?: string;
  /** Absent for `exclude`, so cursors made before the trash still read as they did. */
  d?: DeletedMode;
  k: unknown[];
}

/**
 * Nonces are cut from a pool of random bytes refilled 4,096 nonces at a time: one randomBytes call per
 * nonce cost about as much as the encryption itself (every list page with a next one makes a cursor).
 */
const NONCE_POOL_NONCES = 4_096;
let noncePool = Buffer.alloc(0);
let nonceOffset = 0;

function nextNonce(): Buffer {
  if (nonceOffset + NONCE_BYTES > noncePool.length) {
    noncePool = randomBytes(NONCE_BYTES * NONCE_POOL_NONCES);
    nonceOffset = 0;
  }
  const nonce = noncePool.subarray(nonceOffset, nonceOffset + NONCE_BYTES);
  nonceOffset += NONCE_BYTES;
  return nonce;
}

function invalidCursor(reason: string) {
  return errors.invalidQuery(undefined, { cause: `cursor: ${reason}` });
}

/** What a cursor is bound to without carrying it: its version, business and entity. */
function associatedData(businessId: string, entity: RecordEntity): Buffer {
  return Buffer.from(`${VERSION}\u0000${businessId}\u0000${entity}`, "utf8");
}

export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), KEY_CONTEXT, 32));
  }

  encode(state: CursorState): string {
    const payload: Payload = { k: state.key };
    if (state.where !== undefined) payload.w = state.where;
    if (state.orderBy !== undefined) payload.o = state.orderBy;
    if (state.deleted !== "exclude") payload.d = state.deleted;
    const nonce = nextNonce();
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    cipher.setAAD(associatedData(state.businessId, state.entity));
    const sealed = Buffer.concat([Buffer.of(VERSION), nonce, cipher.update(JSON.stringify(payload), "utf8"), cipher.final(), cipher.getAuthTag()]);
    return sealed.toString("base64url");
  }

  /** The state of a cursor this service made for `businessId` and `entity`; 400019 for anything else. */
  decode(cursor: unknown, businessId: string, entity: RecordEntity): CursorState {
    if (typeof cursor !== "string") throw invalidCursor("given more than once or not a string");
    const sealed = Buffer.from(cursor, "base64url");
    // Node's decoder skips characters outside the alphabet: only the exact text this service wrote counts.
    if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed.toString("base64url") !== cursor) throw invalidCursor("malformed");
    if (sealed[0] !== VERSION) throw invalidCursor("unknown version");
    let payload: Payload;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(1, 1 + NONCE_BYTES));
      decipher.setAAD(associatedData(businessId, entity));
      decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(sealed.subarray(1 + NONCE_BYTES, sealed.length - TAG_BYTES)), decipher.final()]);
      payload = JSON.parse(plain.toString("utf8")) as Payload;
    } catch (err) {
      // One answer for all: altered, made with another secret, or for another business or entity.
      throw invalidCursor(`not one of ours for this business and entity (${String(err)})`);
    }
    if (!Array.isArray(payload.k)) throw invalidCursor("no key");
    const deleted = payload.d ?? "exclude";
    if (!(deletedModes as readonly string[]).includes(deleted)) throw invalidCursor("unknown deleted mode");
    return { businessId, entity, where: payload.w, orderBy: payload.o, deleted, key: payload.k };
  }
}
