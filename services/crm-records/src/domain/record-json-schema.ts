// GET /api/v1/{entity}/schema (extensions §E4): the JSON Schema (draft 2020-12) of a record as one
// business sees it. The built-in part comes from the contract's response schema (the one the OpenAPI
// document describes), with each field typed from its declaration; `customFields` is spelled out from
// the business's active definitions, at every level a relation can carry a record. Pure: no I/O.
import { CUSTOM_FIELD_LIMITS, CUSTOM_FIELDS_PROPERTY, MONEY_UPPER_BOUND, recordContracts, z, type RecordEntity, type RecordField } from "@crm/contracts";
import type { CustomFieldDefinition } from "./custom-field-definitions";
import { EMAIL_MAX_LENGTH, EMAIL_PATTERN, URL_MAX_LENGTH, URL_PATTERN } from "./custom-field-values";

export type JsonSchema = { [keyword: string]: unknown };

export const JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema";

/** The definitions the schema describes, per entity (archived ones are left out here). */
export type DefinitionsOf = (entity: RecordEntity) => readonly CustomFieldDefinition[];

/** `schema` that also admits null: the type widened, and null added to an enum. */
function orNull(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = { ...schema, type: [schema["type"], "null"] };
  if (Array.isArray(schema["enum"])) out["enum"] = [...schema["enum"], null];
  return out;
}

/** A built-in field as answers carry it: ids as UUID text, decimals as numbers, times as ISO 8601 UTC text. */
function builtInFieldSchema(field: RecordField): JsonSchema {
  const schema: JsonSchema =
    field.type === "uuid"
      ? { type: "string", format: "uuid" }
      : field.type === "datetime"
        ? { type: "string", format: "date-time" }
        : field.type === "decimal"
          ? { type: "number" }
          : field.type === "boolean"
            ? { type: "boolean" }
            : field.type === "enum"
              ? { type: "string", enum: [...(field.enumValues ?? [])] }
              : { type: "string" };
  return field.nullable ? orNull(schema) : schema;
}

/**
 * A custom value of `definition`'s type, within its limits. `number`'s 4 decimal places are said in
 * words: `multipleOf: 0.0001` fails on binary fractions (0.3 / 0.0001 is not an integer in floating
 * point), and a record the API returns must always validate.
 */
function customValueSchema(definition: CustomFieldDefinition): JsonSchema {
  const options = [...(definition.options ?? [])];
  switch (definition.type) {
    case "text":
      return { type: "string", maxLength: CUSTOM_FIELD_LIMITS.textMaxLength };
    case "longText":
      return { type: "string", maxLength: CUSTOM_FIELD_LIMITS.longTextMaxLength };
    case "number":
      return { type: "number", exclusiveMinimum: -MONEY_UPPER_BOUND, exclusiveMaximum: MONEY_UPPER_BOUND };
    case "integer":
      return { type: "integer", minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER };
    case "boolean":
      return { type: "boolean" };
    case "date":
      return { type: "string", format: "date" };
    case "dateTime":
      return { type: "string", format: "date-time" };
    case "email":
      return { type: "string", maxLength: EMAIL_MAX_LENGTH, pattern: EMAIL_PATTERN.source };
    case "url":
      return { type: "string", maxLength: URL_MAX_LENGTH, pattern: URL_PATTERN.source };
    case "select":
      return { type: "string", enum: options };
    case "multiSelect":
      return { type: "array", items: { type: "string", enum: options }, uniqueItems: true, maxItems: options.length };
  }
}

/** What a definition promises beyond its JSON type, in words a reader of the schema sees. */
function customValueNotes(definition: CustomFieldDefinition): string {
  const notes = [`Custom field of type ${definition.type}.`];
  if (definition.description) notes.unshift(definition.description);
  if (definition.type === "number") notes.push(`At most ${CUSTOM_FIELD_LIMITS.numberMaxDecimals} decimal places.`);
  if (definition.type === "multiSelect") notes.push("Distinct options, in the order given.");
  if (definition.required) notes.push("Required: a create or update cannot leave it null (records written before it became required may still hold null).");
  if (definition.unique) notes.push("Unique: no two live records of the business hold the same value.");
  notes.push("Null when the record holds no value.");
  return notes.join(" ");
}

/** `customFields`: one member per active definition, always present, value or null, nothing else. */
export function customFieldsJsonSchema(definitions: readonly CustomFieldDefinition[]): JsonSchema {
  const active = definitions.filter((definition) => !definition.isArchived);
  const properties: JsonSchema = {};
  for (const definition of active) {
    properties[definition.key] = {
      title: definition.label,
      description: customValueNotes(definition),
      ...orNull(customValueSchema(definition)),
      ...(definition.defaultValue === null ? {} : { default: definition.defaultValue }),
    };
  }
  return {
    type: "object",
    description: "This business's custom fields (extensions §E4): one member per active definition, value or null.",
    properties,
    required: active.map((definition) => definition.key),
    additionalProperties: false,
  };
}

const generated = new Map<RecordEntity, JsonSchema>();

/** The contract's response schema as JSON Schema: its structure (required, closed objects, relations, items). */
function contractSchema(entity: RecordEntity): JsonSchema {
  let schema = generated.get(entity);
  if (!schema) {
    schema = z.toJSONSchema(recordContracts[entity].view, { target: "draft-2020-12", io: "output", unrepresentable: "any" }) as JsonSchema;
    generated.set(entity, schema);
  }
  return structuredClone(schema);
}

function propertiesOf(node: unknown): JsonSchema | undefined {
  const properties = (node as JsonSchema | undefined)?.["properties"];
  return properties && typeof properties === "object" ? (properties as JsonSchema) : undefined;
}

/** Types `node` (a record of `entity`) field by field, and its relations' records in turn. */
function describeRecord(node: JsonSchema, entity: RecordEntity, definitionsOf: DefinitionsOf): void {
  const properties = propertiesOf(node);
  if (!properties) return;
  const contract = recordContracts[entity];
  for (const [name, field] of Object.entries(contract.fields as Readonly<Record<string, RecordField>>)) {
    if (Object.hasOwn(properties, name)) properties[name] = builtInFieldSchema(field);
  }
  if (Object.hasOwn(properties, CUSTOM_FIELDS_PROPERTY)) properties[CUSTOM_FIELDS_PROPERTY] = customFieldsJsonSchema(definitionsOf(entity));
  for (const [name, relation] of Object.entries(contract.relations)) {
    const property = properties[name] as JsonSchema | undefined;
    if (!property) continue;
    property["description"] = relation.default ? `Included unless include=-${name}.` : `Only with include=${name}.`;
    const record = relation.kind === "one" ? property : (property["items"] as JsonSchema | undefined);
    if (record) describeRecord(record, relation.target, definitionsOf);
  }
}

/** The JSON Schema of `entity`'s record as the business whose definitions `definitionsOf` gives sees it. */
export function recordJsonSchema(entity: RecordEntity, definitionsOf: DefinitionsOf): JsonSchema {
  const schema = contractSchema(entity);
  describeRecord(schema, entity, definitionsOf);
  return {
    $schema: JSON_SCHEMA_DIALECT,
    title: entity,
    description:
      `A ${entity} record as GET, lists, creates and updates answer it (relations only when included), and as event data carries it (without relations). ` +
      "An answer narrowed with fields= holds a subset.",
    ...Object.fromEntries(Object.entries(schema).filter(([keyword]) => keyword !== "$schema")),
  };
}
