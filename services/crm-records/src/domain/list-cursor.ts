// Cursors of record lists (extensions §E2.1): an opaque, signed token naming the business, the
// entity, the query's `where` and `orderBy` exactly as the client wrote them, and the sort key of
// the last record returned. It is base64url(JSON) "." base64url(HMAC-SHA256), keyed from the
// service's internal token secret, so a caller can read what a cursor holds but cannot change any
// of it, and a cursor made for another business or entity is refused rather than followed.
import { createHmac, timingSafeEqual } from "node:crypto";
import type { RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";

const VERSION = 1;
/** Separates this use of the secret from every other (the internal tokens are signed with it too). */
const KEY_CONTEXT = "crm-records list cursor v1";

export interface CursorState {
  businessId: string;
  entity: RecordEntity;
  /** The list's `where` and `orderBy` parameters as written; undefined when absent. */
  where: string | undefined;
  orderBy: string | undefined;
  /** The values of the (parsed) orderBy fields on the last record of the page, id last. */
  key: unknown[];
}

interface Payload {
  v: number;
  b: string;
  e: string;
  w?: string;
  o?: string;
  k: unknown[];
}

function invalidCursor(reason: string) {
  return errors.invalidQuery(undefined, { cause: `cursor: ${reason}` });
}

export class CursorCodec {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac("sha256", secret).update(KEY_CONTEXT).digest();
  }

  encode(state: CursorState): string {
    const payload: Payload = { v: VERSION, b: state.businessId, e: state.entity, k: state.key };
    if (state.where !== undefined) payload.w = state.where;
    if (state.orderBy !== undefined) payload.o = state.orderBy;
    const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
    return `${body}.${this.sign(body)}`;
  }

  /** The state of a cursor this service made for `businessId` and `entity`; 400019 for anything else. */
  decode(cursor: unknown, businessId: string, entity: RecordEntity): CursorState {
    if (typeof cursor !== "string") throw invalidCursor("given more than once or not a string");
    const dot = cursor.indexOf(".");
    if (dot <= 0) throw invalidCursor("malformed");
    const body = cursor.slice(0, dot);
    const given = Buffer.from(cursor.slice(dot + 1), "base64url");
    const expected = Buffer.from(this.sign(body), "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalidCursor("bad signature");
    let payload: Payload;
    try {
      payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Payload;
    } catch (err) {
      throw invalidCursor(`unreadable (${String(err)})`);
    }
    if (payload.v !== VERSION || !Array.isArray(payload.k)) throw invalidCursor("unknown version");
    if (payload.b !== businessId) throw invalidCursor("made for another business");
    if (payload.e !== entity) throw invalidCursor("made for another entity");
    return { businessId, entity, where: payload.w, orderBy: payload.o, key: payload.k };
  }

  private sign(body: string): string {
    return createHmac("sha256", this.key).update(body).digest("base64url");
  }
}
