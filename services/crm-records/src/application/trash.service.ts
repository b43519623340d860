// The trash's own operations (extensions §E5): restore a record (and the contacts its client's delete
// took with it) and purge a trashed one for good. Moving a record to the trash is DELETE's job
// (RecordService.remove); reads choose live or trashed records with `deleted=` (deleted-mode.ts).
import { type AuditContext, AuditWriter } from "@crm/audit";
import { CUSTOM_FIELDS_PROPERTY, isUuid, type EventEnvelope, type RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { ifMatchHolds, recordEtag } from "../domain/record-etag";
import { purgedAuditChange } from "../domain/record-audit";
import { serializeRecord, type CustomFieldsShaper, type RecordView } from "../domain/record.serializer";
import { uniqueValueText, type CustomFieldValue } from "../domain/custom-field-values";
import { insertUniqueValues, isUniqueViolation, takenUniqueValue, type UniqueValue } from "../persistence/custom-field-unique";
import { type BusinessCustomFields, type CustomFieldCache, customFieldsOf } from "./custom-field-cache";
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
  /** Each business's custom field definitions (extensions §E4): answers show them, a restore takes its unique values back. */
  customFields: CustomFieldCache;
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
    const custom = await customFieldsOf(this.options.customFields, businessId);
    let taken: Array<UniqueValue & { recordId: string; entity: RecordEntity }> = [];
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
        // A record in the trash held no unique custom value (record.service.ts, remove): it takes its values back, or 409001.
        taken = [{ definition, row }, ...restored].flatMap((record) =>
          heldUniqueValues(custom, record.definition.entity, record.row).map((value) => ({ ...value, recordId: String(record.row["id"]), entity: record.definition.entity })),
        );
        for (const entity of new Set(taken.map((value) => value.entity))) {
          await insertUniqueValues(
            tx,
            businessId,
            entity,
            taken.filter((value) => value.entity === entity),
          );
        }
        const view = this.view(definition, row, custom.shaper);
        const events: EventEnvelope[] = [buildEnvelope(definition.entity, "restored", businessId, view)];
        for (const child of restored) events.push(buildEnvelope(child.definition.entity, "restored", businessId, this.view(child.definition, child.row, custom.shaper)));
        return { view, events };
      },
      this.options.onCommitted,
    ).catch(async (err: unknown) => {
      if (taken.length === 0 || !isUniqueViolation(err)) throw err;
      for (const entity of new Set(taken.map((value) => value.entity))) {
        const held = await takenUniqueValue(
          this.options.prisma,
          businessId,
          entity,
          taken.filter((value) => value.entity === entity),
        );
        if (held)
          throw errors.alreadyExists([{ path: `${CUSTOM_FIELDS_PROPERTY}.${held.key}`, message: "Another record took this value of a unique custom field meanwhile" }], {
            cause: err,
          });
      }
      throw err;
    });
  }

  /**
   * `DELETE /{entity}/{id}?permanent=true`: removes a trashed record for good and answers it as the
   * trash held it; no event, but an `{entity}.purged` audit entry in its transaction, for it and for
   * each trashed dependent that goes with it (a client's contacts). A live record →
   * 409007 (delete it first). With `ifMatch`, the trashed record's ETag must match (412000).
   */
  async purge(definition: EntityDefinition, businessId: string, id: string, context: AuditContext, ifMatch?: string): Promise<RecordView> {
    if (!isUuid(id)) throw errors.notFound();
    const custom = await customFieldsOf(this.options.customFields, businessId);
    return inTransaction(this.options.prisma, businessId, { writer: this.audit, context }, async (tx) => {
      const existing = await lockedAnyRecord(tx, definition, businessId, id);
      if (!existing) throw errors.notFound();
      if (existing["deletedAt"] == null) throw errors.notDeleted();
      const view = this.view(definition, existing, custom.shaper);
      if (ifMatch !== undefined && !ifMatchHolds(ifMatch, recordEtag(definition, view))) throw errors.preconditionFailed();
      const dependents = await purgeRecord(tx, this.options.definitions, definition, businessId, id);
      // One entry per record gone: the client's trashed contacts first, then the client.
      await this.audit.record(tx, businessId, [...dependents, { entity: definition.entity, id }].map(purgedAuditChange), context);
      return { view, events: [] };
    });
  }

  private view(definition: EntityDefinition, row: Record<string, unknown>, custom: CustomFieldsShaper): RecordView {
    return serializeRecord(definition, row, this.options.definitions, false, custom);
  }
}

/** The unique custom values a stored record holds under the business's current definitions. */
function heldUniqueValues(custom: BusinessCustomFields, entity: RecordEntity, row: Record<string, unknown>): UniqueValue[] {
  const stored = (row[CUSTOM_FIELDS_PROPERTY] ?? {}) as Record<string, CustomFieldValue | null>;
  return custom
    .rules(entity)
    .filter((rule) => rule.unique && stored[rule.key] !== undefined && stored[rule.key] !== null)
    .map((rule) => ({ key: rule.key, value: uniqueValueText(stored[rule.key]!) }));
}
