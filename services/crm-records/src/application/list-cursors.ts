// List cursors as the service hands them out and takes them back (extensions §E2.1): sealed by the
// codec (../domain/list-cursor.ts), with the sort values too long to carry kept by the product
// (../persistence/list-cursor-values.ts), so that a walk continues after exactly the value it was after.
import type { RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { OrderTerm } from "@crm/query-language";
import { sortValueOf } from "../domain/custom-field-query";
import type { DeletedMode } from "../domain/deleted-mode";
import { CursorCodec, type CursorState, HeldValue, holdLongValues } from "../domain/list-cursor";
import type { Row } from "../domain/record.serializer";
import { keepCursorValues, keptCursorValues } from "../persistence/list-cursor-values";
import type { RunStatement } from "../persistence/record-reads";

/** What a cursor carries of the query it continues. */
export interface CursorQuery {
  where: string | undefined;
  orderBy: string | undefined;
  deleted: DeletedMode;
}

/** A sort value as a cursor keeps it: timestamps as ISO text, decimals as exact text. */
function cursorValue(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === "object" && value !== null && typeof (value as { toFixed?: unknown }).toFixed === "function") return (value as { toFixed(): string }).toFixed();
  return value ?? null;
}

export class ListCursors {
  private readonly codec: CursorCodec;

  /** `secret`: every instance serving the same businesses needs the same one; `run`: the driver's statements. */
  constructor(
    secret: string,
    private readonly run: RunStatement,
  ) {
    this.codec = new CursorCodec(secret);
  }

  /** The state a cursor carries; 400019 for one this product did not make for this business and entity. */
  decode(cursor: unknown, businessId: string, entity: RecordEntity): CursorState {
    return this.codec.decode(cursor, businessId, entity);
  }

  /**
   * The cursor's key with its held values read back from what the product kept when it made the cursor,
   * never from the record: edited, trashed or purged since, the walk still continues after the value it
   * was after, in the order it had. One statement, for those cursors only. A value retention removed
   * leaves nothing to continue after: 410000, as a change-feed cursor whose events are gone (extensions
   * §E6); the client starts again.
   */
  async afterKey(businessId: string, key: readonly unknown[]): Promise<unknown[]> {
    const held = key.filter((value): value is HeldValue => value instanceof HeldValue);
    if (held.length === 0) return [...key];
    const kept = await keptCursorValues(
      this.run,
      businessId,
      held.map((value) => value.digest),
    );
    return key.map((value) => {
      if (!(value instanceof HeldValue)) return value;
      const text = kept.get(value.digest);
      if (!value.holds(text)) throw errors.cursorExpired(undefined, { cause: "cursor: the sort value it was after is no longer kept (list cursor retention)" });
      return text;
    });
  }

  /**
   * A cursor after the last row of the page, or null when the extra row says nothing follows. Sort values
   * too long to carry (holdLongValues) are kept first, so the cursor never names a value not kept.
   */
  async next(entity: RecordEntity, businessId: string, query: CursorQuery, orderBy: readonly OrderTerm[], rows: readonly Row[], take: number): Promise<string | null> {
    if (rows.length <= take) return null;
    const last = rows[take - 1]!;
    const values = orderBy.map((term) => cursorValue(sortValueOf(last, term.field)));
    const key = holdLongValues(
      values,
      orderBy.findIndex((term) => term.field === "id"),
    );
    const held = new Map(key.flatMap((value, i) => (value instanceof HeldValue ? [[value.digest, values[i] as string] as const] : [])));
    await keepCursorValues(this.run, businessId, held);
    return this.codec.encode({ businessId, entity, where: query.where, orderBy: query.orderBy, deleted: query.deleted, key });
  }
}
