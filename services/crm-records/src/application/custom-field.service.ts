// The custom field definition operations (extensions §E4): list, read, define, change, archive and
// remove for good. Each write runs in one transaction that raises the business's definition version
// first (custom-field.store.ts), so the limits are counted against what is committed and every cache
// sees the change on its next use (custom-field-cache.ts). Each change writes its audit entry (extensions
// §E7) in that same transaction (custom-field-audit.ts); a DELETE of an archived definition changes
// nothing and writes none.
import { type AuditContext, AuditWriter } from "@crm/audit";
import type { CustomFieldCreate, CustomFieldDefinitionView, CustomFieldUpdate, RecordEntity } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { changedDefinition, type CustomFieldDefinition, definitionView, newDefinition } from "../domain/custom-field-definitions";
import { fieldCreated, fieldDeleted, fieldUpdated } from "../domain/custom-field-audit";
import type { CustomFieldStore } from "../persistence/custom-field.store";
import type { CustomFieldCache } from "./custom-field-cache";

export class CustomFieldService {
  constructor(
    private readonly store: CustomFieldStore,
    private readonly cache: CustomFieldCache,
    private readonly definitions: Readonly<Record<RecordEntity, EntityDefinition>>,
    /** Writes the audit entries in each change's transaction; a test may give one with its own clock. */
    private readonly audit: AuditWriter = new AuditWriter("records"),
  ) {}

  async list(entity: RecordEntity, businessId: string): Promise<CustomFieldDefinitionView[]> {
    return (await this.cache.of(businessId, entity)).map(definitionView);
  }

  async get(entity: RecordEntity, businessId: string, key: string): Promise<CustomFieldDefinitionView> {
    const found = (await this.cache.of(businessId, entity)).find((definition) => definition.key === key);
    if (!found) throw errors.notFound();
    return definitionView(found);
  }

  /** A new definition; answered once the records created while it was made sort on it too (custom-field-sort.ts). */
  async create(entity: RecordEntity, businessId: string, input: CustomFieldCreate, context: AuditContext): Promise<CustomFieldDefinitionView> {
    const view = await this.store.write(businessId, entity, async (tx, existing) => {
      const values = newDefinition(this.definitions[entity], existing, input);
      const created = definitionView(await this.store.insert(tx, businessId, this.definitions[entity], values));
      await this.audit.record(tx, businessId, fieldCreated(entity, created), context);
      return created;
    });
    await this.store.settleNew(this.definitions[entity], businessId, view);
    return view;
  }

  /** A change; `{"isArchived": false}` brings an archived definition back with its values. */
  async update(entity: RecordEntity, businessId: string, key: string, change: CustomFieldUpdate, context: AuditContext): Promise<CustomFieldDefinitionView> {
    return this.store.write(businessId, entity, async (tx, existing) => {
      const current = found(existing, key);
      const view = definitionView(await this.store.update(tx, businessId, entity, changedDefinition(current, change)));
      await this.audit.record(tx, businessId, fieldUpdated(entity, definitionView(current), view), context);
      return view;
    });
  }

  /**
   * DELETE: archives (its values are kept, and hidden); with `permanent`, removes an archived
   * definition and its values for good (a live one: 409007).
   */
  async remove(entity: RecordEntity, businessId: string, key: string, permanent: boolean, context: AuditContext): Promise<CustomFieldDefinitionView> {
    return this.store.write(businessId, entity, async (tx, existing) => {
      const current = found(existing, key);
      const before = definitionView(current);
      if (!permanent) {
        if (current.isArchived) return before;
        const archived = definitionView(await this.store.update(tx, businessId, entity, { ...current, isArchived: true }));
        await this.audit.record(tx, businessId, fieldUpdated(entity, before, archived), context);
        return archived;
      }
      if (!current.isArchived) throw errors.notDeleted([{ path: "permanent", message: "Only an archived definition can be removed for good: archive it first" }]);
      await this.store.remove(tx, businessId, this.definitions[entity], key);
      await this.audit.record(tx, businessId, fieldDeleted(entity, key), context);
      return before;
    });
  }
}

function found(existing: readonly CustomFieldDefinition[], key: string): CustomFieldDefinition {
  const definition = existing.find((candidate) => candidate.key === key);
  if (!definition) throw errors.notFound();
  return definition;
}
