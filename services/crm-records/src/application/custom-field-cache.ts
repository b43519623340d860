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
    return this.atVersion(businessId, await this.store.version(businessId));
  }

  /**
   * The business's definitions at `version`, read by the caller in the same snapshot as what it will
   * shape (a list's rows: D34): the kept copy when it is that version, else read again.
   */
  async atVersion(businessId: string, version: bigint): Promise<BusinessDefinitions> {
    const cached = this.entries.get(businessId);
    if (cached && cached.version === version) return this.keep(businessId, cached);
    return this.keep(businessId, version === 0n ? NO_DEFINITIONS : await this.store.all(businessId));
  }

  /** The copy kept for the business, whatever its version (undefined when none is): a guess the caller must confirm with atVersion. */
  kept(businessId: string): BusinessDefinitions | undefined {
    return this.entries.get(businessId);
  }

  private keep(businessId: string, definitions: BusinessDefinitions): BusinessDefinitions {
    // Most recently used last: Map keeps insertion order.
    this.entries.delete(businessId);
    this.entries.set(businessId, definitions);
    if (this.entries.size > this.maxBusinesses) this.entries.delete(this.entries.keys().next().value!);
    return definitions;
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
  return shapedFields(await cache.business(businessId));
}

/** Definitions as reads and writes use them, made once per version read. */
export function shapedFields(definitions: BusinessDefinitions): BusinessCustomFields {
  let found = shaped.get(definitions);
  if (!found) {
    const rules = (entity: RecordEntity) => definitions.byEntity.get(entity) ?? NONE;
    found = { rules, shaper: (entity, stored) => customFieldsView(rules(entity), stored) };
    shaped.set(definitions, found);
  }
  return found;
}
