// Rows -> the JSON objects GET returns (and events carry): timestamps as ISO 8601 UTC, exact
// decimals as JSON numbers, line items in order, relations only when they were loaded.
import { CUSTOM_FIELDS_PROPERTY, type RecordEntity } from "@crm/contracts";
import type { EntityDefinition } from "../entities";
import { toJsonNumber } from "./money";

export type Row = Record<string, unknown>;
export type RecordView = Record<string, unknown>;

/** Prisma returns NUMERIC as decimal.js objects; recognised by shape so this module stays Prisma-free. */
function isDecimal(value: unknown): value is { toFixed(): string } {
  return typeof value === "object" && value !== null && !(value instanceof Date) && typeof (value as { toFixed?: unknown }).toFixed === "function";
}

function scalar(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (isDecimal(value)) return toJsonNumber(value.toFixed());
  return value ?? null;
}

export function serializeItems(items: unknown): RecordView[] {
  if (!Array.isArray(items)) return [];
  return (items as Row[]).map((item) => ({
    description: item["description"],
    quantity: scalar(item["quantity"]),
    unitPrice: scalar(item["unitPrice"]),
  }));
}

/** A record's stored custom values (its `customFields` column) as its entity's active definitions show them (custom-field-values.ts). */
export type CustomFieldsShaper = (entity: RecordEntity, stored: unknown) => RecordView;

/**
 * One record. `withRelations` adds the relations present on the row (they are only present when
 * the caller asked for them); events and write responses pass false. `custom`: the business's
 * custom fields (extensions §E4), after the columns, on the record and its related records.
 */
export function serializeRecord(
  definition: EntityDefinition,
  row: Row,
  definitions: Readonly<Record<RecordEntity, EntityDefinition>>,
  withRelations: boolean,
  custom?: CustomFieldsShaper,
): RecordView {
  const view: RecordView = {};
  for (const name of Object.keys(definition.columns)) {
    // Items sit next to the total they add up to.
    if (name === "totalAmount" && definition.document) view[definition.document.itemsRelation] = serializeItems(row[definition.document.itemsRelation]);
    view[name] = scalar(row[name]);
  }
  if (custom) view[CUSTOM_FIELDS_PROPERTY] = custom(definition.entity, row[CUSTOM_FIELDS_PROPERTY]);
  if (!withRelations) return view;
  for (const [name, relation] of Object.entries(definition.relations)) {
    const value = row[name];
    if (value === undefined) continue;
    const target = definitions[relation.target];
    if (Array.isArray(value)) view[name] = (value as Row[]).map((related) => serializeRecord(target, related, definitions, false, custom));
    else view[name] = value === null ? null : serializeRecord(target, value as Row, definitions, false, custom);
  }
  return view;
}
