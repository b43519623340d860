// Each business's custom field definitions, cached in the process (extensions §E4). Every use first
// reads the business's definition version (one primary-key read); the copy is used only while it is
// current, so a definition committed by any replica shapes the next request everywhere, and no write
// that starts after it commits uses the definitions from before it (docs/performance.md D34).
import type { RecordEntity } from "@crm/contracts";
import type { CustomFieldDefinition } from "../domain/custom-field-definitions";
import { customFieldsView } from "../domain/custom-field-values";
import type { CustomFieldsShaper } from "../domain/record.serializer";
import type { BusinessDefinitions, CustomFieldStore } from "../persistence/custom-field.store";

/** Businesses whose definitions are kept at once; the least recently used go first. */
const DEFAULT_MAX_BUSINESSES = 10_000;
const NONE: readonly CustomFieldDefinition[] = [];
/** A business that never defined a field. */
const NO_DEFINITIONS: BusinessDefinitions = { version: 0n, byEntity: new Map() };

export class CustomFieldCache {
  private readonly entries = new Map<string, BusinessDefinitions>();

  constructor(
    private readonly store: CustomFieldStore,
    private readonly maxBusinesses = DEFAULT_MAX_BUSINESSES,
  ) {}

  /** The entity's definitions (archived ones included, oldest first) as they are now. */
  async of(businessId: string, entity: RecordEntity): Promise<readonly CustomFieldDefinition[]> {
    return (await this.business(businessId)).byEntity.get(entity) ?? NONE;
  }

  /** All the business's definitions, current. */
  async business(businessId: string): Promise<BusinessDefinitions> {
    const version = await this.store.version(businessId);
    const cached = this.entries.get(businessId);
    if (cached && cached.version === version) {
      // Most recently used last: Map keeps insertion order.
      this.entries.delete(businessId);
      this.entries.set(businessId, cached);
      return cached;
    }
    if (version === 0n) return NO_DEFINITIONS;
    const fresh = await this.store.all(businessId);
    this.entries.delete(businessId);
    this.entries.set(businessId, fresh);
    if (this.entries.size > this.maxBusinesses) this.entries.delete(this.entries.keys().next().value!);
    return fresh;
  }
}

/** A business's definitions as record reads and writes use them. */
export interface BusinessCustomFields {
  /** The entity's definitions, archived ones included. */
  rules(entity: RecordEntity): readonly CustomFieldDefinition[];
  /** `customFields` of a record as answers and events show it. */
  shaper: CustomFieldsShaper;
}

const shaped = new WeakMap<BusinessDefinitions, BusinessCustomFields>();

/** The business's current definitions (one version read), shaped once per version. */
export async function customFieldsOf(cache: CustomFieldCache, businessId: string): Promise<BusinessCustomFields> {
  const definitions = await cache.business(businessId);
  let found = shaped.get(definitions);
  if (!found) {
    const rules = (entity: RecordEntity) => definitions.byEntity.get(entity) ?? NONE;
    found = { rules, shaper: (entity, stored) => customFieldsView(rules(entity), stored) };
    shaped.set(definitions, found);
  }
  return found;
}
