// The one function every service calls to audit a change inside the change's transaction. Later
// changes call it with actions of their own (the trash's `{entity}.restored` and `{entity}.purged`,
// custom fields' `field.*`): `writer.record(tx, businessId, { action, target, changes }, context)`.
import { type AuditChange, auditRow, type AuditRow } from "./audit-entry";
import type { AuditContext } from "./audit-context";
import { type AuditSchema, type RawExecutor, writeAuditRows } from "./audit-sql";

export class AuditWriter {
  constructor(
    readonly schema: AuditSchema,
    /** When entries occur: tests move it. */
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The rows of `changes`, all at one instant (one change that touched several objects: a cascade, a batch). */
  rows(businessId: string | null, changes: readonly AuditChange[], context: AuditContext): AuditRow[] {
    const at = this.now();
    return changes.map((change) => auditRow(businessId, change, context, at));
  }

  /** Writes one entry per change through `tx`, the transaction of the change itself. */
  async record(tx: RawExecutor, businessId: string | null, changes: AuditChange | readonly AuditChange[], context: AuditContext): Promise<void> {
    await writeAuditRows(tx, this.schema, this.rows(businessId, Array.isArray(changes) ? changes : [changes as AuditChange], context));
  }
}
