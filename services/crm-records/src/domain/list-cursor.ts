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
//
// A cursor travels in a request line, which Node refuses past 16 KB (431, outside the error envelope):
// a sort value may be a longText of 65,536 characters, or a note of 10,000 CJK ones (issue 39). So the
// key's long text values do not ride in it: holdLongValues replaces them with a HeldValue, the digest
// of the value, which the product keeps per business and digest when it makes the cursor
// (persistence/list-cursor-values.ts); the next page reads the value back by digest, never from the
// record, which may have been edited or purged since. Such cursors have a version of their own, so a
// replica that predates them refuses them (400019) rather than misreads them; every other cursor is
// written as before, and read as before.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { type DeletedMode, deletedModes, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";

/** Every value inline (the format since issue 35). */
const VERSION = 2;
/** Some values held (HeldValue), written as {"h": digest} in the key. */
const VERSION_WITH_HELD_VALUES = 3;
/**
 * The most bytes (JSON, UTF-8) the key's text values may take in a cursor; the longest ones are held
 * until the rest fit. Every type but text is at most a few dozen bytes, and the where and orderBy it
 * carries were already in the first page's request line, so a cursor stays a few KB.
 */
export const INLINE_KEY_BYTES = 1_000;
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
  /** The values of the (parsed) orderBy fields on the last record of the page (long ones as HeldValue). */
  key: unknown[];
}

/**
 * A text sort value too long for the cursor, named by its digest: the next page reads the value kept
 * under it (list-cursor-values.ts), and uses it only if it is this very value (holds).
 */
export class HeldValue {
  constructor(readonly digest: string) {}

  static of(value: string): HeldValue {
    return new HeldValue(digestOf(value));
  }

  holds(value: unknown): value is string {
    return typeof value === "string" && digestOf(value) === this.digest;
  }
}

/** 128 bits of SHA-256: which value a cursor continued after, never the value (it is inside the ciphertext anyway). */
function digestOf(value: string): string {
  return createHash("sha256").update(value, "utf8").digest().subarray(0, 16).toString("base64url");
}

/**
 * The key as a cursor carries it: text values, longest first, held (HeldValue) until the others take at
 * most INLINE_KEY_BYTES; the value at `idIndex`, the record's id, the keyset's last tie-breaker, is
 * never held. Most keys come back unchanged.
 */
export function holdLongValues(key: readonly unknown[], idIndex: number): unknown[] {
  const sizes = key.map((value, i) => (typeof value === "string" && i !== idIndex ? encodedBytes(value) : 0));
  let inline = sizes.reduce((sum, size) => sum + size, 0);
  if (inline <= INLINE_KEY_BYTES) return [...key];
  const held = new Set<number>();
  for (const i of sizes.map((_, i) => i).sort((x, y) => sizes[y]! - sizes[x]!)) {
    if (inline <= INLINE_KEY_BYTES || sizes[i] === 0) break;
    held.add(i);
    inline -= sizes[i]!;
  }
  return key.map((value, i) => (held.has(i) ? HeldValue.of(value as string) : value));
}

/** A text's bytes in the cursor's JSON; any text longer than the budget in characters is over it without being encoded. */
function encodedBytes(value: string): number {
  return value.length > INLINE_KEY_BYTES ? value.length : Buffer.byteLength(JSON.stringify(value), "utf8");
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
function associatedData(version: number, businessId: string, entity: RecordEntity): Buffer {
  return Buffer.from(`${version}\u0000${businessId}\u0000${entity}`, "utf8");
}

export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), KEY_CONTEXT, 32));
  }

  encode(state: CursorState): string {
    const holds = state.key.some((value) => value instanceof HeldValue);
    const version = holds ? VERSION_WITH_HELD_VALUES : VERSION;
    const payload: Payload = { k: holds ? state.key.map((value) => (value instanceof HeldValue ? { h: value.digest } : value)) : state.key };
    if (state.where !== undefined) payload.w = state.where;
    if (state.orderBy !== undefined) payload.o = state.orderBy;
    if (state.deleted !== "exclude") payload.d = state.deleted;
    const nonce = nextNonce();
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    cipher.setAAD(associatedData(version, state.businessId, state.entity));
    const sealed = Buffer.concat([Buffer.of(version), nonce, cipher.update(JSON.stringify(payload), "utf8"), cipher.final(), cipher.getAuthTag()]);
    return sealed.toString("base64url");
  }

  /** The state of a cursor this service made for `businessId` and `entity`; 400019 for anything else. */
  decode(cursor: unknown, businessId: string, entity: RecordEntity): CursorState {
    if (typeof cursor !== "string") throw invalidCursor("given more than once or not a string");
    const sealed = Buffer.from(cursor, "base64url");
    // Node's decoder skips characters outside the alphabet: only the exact text this service wrote counts.
    if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES || sealed.toString("base64url") !== cursor) throw invalidCursor("malformed");
    const version = sealed[0]!;
    if (version !== VERSION && version !== VERSION_WITH_HELD_VALUES) throw invalidCursor("unknown version");
    let payload: Payload;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, sealed.subarray(1, 1 + NONCE_BYTES));
      decipher.setAAD(associatedData(version, businessId, entity));
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
    const key = version === VERSION ? payload.k : payload.k.map(heldValueOf);
    return { businessId, entity, where: payload.w, orderBy: payload.o, deleted, key };
  }
}

/** A key value of a VERSION_WITH_HELD_VALUES cursor: {"h": digest} is a HeldValue, anything else itself. */
function heldValueOf(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  const digest = (value as { h?: unknown }).h;
  if (typeof digest !== "string") throw invalidCursor("a key value that is neither a value nor a held one");
  return new HeldValue(digest);
}
