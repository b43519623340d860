// The trash's own operations (extensions §E5): restore a record (and the contacts its client's delete
// took with it) and purge a trashed one for good. Moving a record to the trash is DELETE's job
// (RecordService.remove); reads choose live or trashed records with `deleted=` (deleted-mode.ts).
import { type AuditContext, AuditWriter } from "@crm/audit";
import { isUuid, type EventEnvelope, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { ifMatchHolds, recordEtag } from "../domain/record-etag";
import { serializeRecord, type RecordView } from "../domain/record.serializer";
import { buildEnvelope } from "../persistence/outbox.writer";
import type { PrismaClient } from "../persistence/prisma";
import { inTransaction } from "../persistence/record-writes";
import { clientIsLive, lockedAnyRecord, purgeRecord, untrashRecord } from "../persistence/trash-writes";

export interface TrashServiceOptions {
  prisma: PrismaClient;
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>;
  /** Called after every committed write (the outbox relay's kick). */
  onCommitted?: () => void;
  /** Writes the audit entries (extensions §E7) in each change's transaction; a test may give one with its own clock. */
  audit?: AuditWriter;
}

export class TrashService {
  private readonly audit: AuditWriter;

  constructor(private readonly options: TrashServiceOptions) {
    this.audit = options.audit ?? new AuditWriter("records");
  }

  /**
   * `POST /{entity}/{id}/restore`: the live record, with a `{entity}.restored` event (and one per
   * contact a client's delete took with it, after the client's). A live record → 409007; a contact,
   * invoice or quote whose client is in the trash → 409008; purged or unknown → 404001.
   */
  async restore(definition: EntityDefinition, businessId: string, id: string, context: AuditContext): Promise<RecordView> {
    if (!isUuid(id)) throw errors.notFound();
    // Each restored record's audit entry follows from its `{entity}.restored` event (record-audit.ts).
    return inTransaction(
      this.options.prisma,
      businessId,
      { writer: this.audit, context },
      async (tx) => {
        const existing = await lockedAnyRecord(tx, definition, businessId, id);
        if (!existing) throw errors.notFound();
        if (existing["deletedAt"] == null) throw errors.notDeleted();
        const reference = definition.clientReference;
        if (reference && !(await clientIsLive(tx, businessId, String(existing[reference])))) throw errors.relatedRecordDeleted();
        const { row, restored } = await untrashRecord(tx, this.options.definitions, definition, businessId, id);
        const view = this.view(definition, row);
        const events: EventEnvelope[] = [buildEnvelope(definition.entity, "restored", businessId, view)];
        for (const child of restored) events.push(buildEnvelope(child.definition.entity, "restored", businessId, this.view(child.definition, child.row)));
        return { view, events };
      },
      this.options.onCommitted,
    );
  }

  /**
   * `DELETE /{entity}/{id}?permanent=true`: removes a trashed record for good and answers it as the
   * trash held it; no event, but an `{entity}.purged` audit entry in its transaction. A live record →
   * 409007 (delete it first). With `ifMatch`, the trashed record's ETag must match (412000).
   */
  async purge(definition: EntityDefinition, businessId: string, id: string, context: AuditContext, ifMatch?: string): Promise<RecordView> {
    if (!isUuid(id)) throw errors.notFound();
    return inTransaction(this.options.prisma, businessId, { writer: this.audit, context }, async (tx) => {
      const existing = await lockedAnyRecord(tx, definition, businessId, id);
      if (!existing) throw errors.notFound();
      if (existing["deletedAt"] == null) throw errors.notDeleted();
      const view = this.view(definition, existing);
      if (ifMatch !== undefined && !ifMatchHolds(ifMatch, recordEtag(definition, view))) throw errors.preconditionFailed();
      await purgeRecord(tx, this.options.definitions, definition, businessId, id);
      await this.audit.record(tx, businessId, { action: `${definition.entity}.purged`, target: { type: definition.entity, id }, changes: null }, context);
      return { view, events: [] };
    });
  }

  private view(definition: EntityDefinition, row: Record<string, unknown>): RecordView {
    return serializeRecord(definition, row, this.options.definitions, false);
  }
}
