// Custom fields (extensions §E4): the fields a business defines on each record entity. Declared once
// here: the types, the limits (also shown in /capabilities), the definition's request and response
// schemas and the shape of `customFields` on records. crm-records checks what these cannot say alone
// (options only for the select types, defaultValue against its type, what a PATCH may change).
import { z } from "./zod";

/** The value types a definition may have; `type` never changes except text -> longText. */
export const customFieldTypes = ["text", "longText", "number", "integer", "boolean", "date", "dateTime", "email", "url", "select", "multiSelect"] as const;
export type CustomFieldType = (typeof customFieldTypes)[number];

/** The two types whose values are drawn from `options`. */
export const customFieldSelectTypes: readonly CustomFieldType[] = ["select", "multiSelect"];

export const CUSTOM_FIELD_KEY_PATTERN = /^[a-z][a-zA-Z0-9]{0,62}$/;
export const CUSTOM_FIELD_OPTION_PATTERN = /^[A-Za-z0-9_ -]{1,64}$/;

/** The limits of extensions §E4; `perEntity` and `uniquePerEntity` count archived definitions too (409006 beyond). */
export const CUSTOM_FIELD_LIMITS = {
  perEntity: 100,
  uniquePerEntity: 10,
  optionsMax: 200,
  textMaxLength: 1000,
  longTextMaxLength: 65_536,
  /** Most decimal places a `number` value carries. */
  numberMaxDecimals: 4,
  labelMaxLength: 200,
  descriptionMaxLength: 1000,
} as const;

/** The path segment of a record's custom values, in bodies, `where`, `orderBy`, `fields` and error paths. */
export const CUSTOM_FIELDS_PROPERTY = "customFields";

/** One value: a scalar, a multiSelect's options, or null (no value). Its type against the definition is crm-records' check. */
export const customFieldValueSchema = z
  .union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.null()])
  .openapi("CustomFieldValue", { description: "A custom field's value: string, number, boolean, an array of options (multiSelect), or null" });
export type CustomFieldJsonValue = z.infer<typeof customFieldValueSchema>;

/** `customFields` of a record: one member per active definition of its entity (value or null). */
export const customFieldsSchema = z.record(z.string(), customFieldValueSchema).openapi("CustomFields", {
  description:
    "The business's own fields (extensions §E4): one member per active definition, value or null. On create and update: members to set, null clears one; " +
    "PATCH and PUT merge by key. GET /api/v1/{entity}/schema describes them per business.",
  example: { externalId: "crm-42", tier: "gold" },
});

const key = z.string().regex(CUSTOM_FIELD_KEY_PATTERN).openapi({
  description: "Never changes; not a built-in field or relation name of the entity. Regex ^[a-z][a-zA-Z0-9]{0,62}$",
  example: "externalId",
});
const label = z.string().trim().min(1).max(CUSTOM_FIELD_LIMITS.labelMaxLength);
const description = z.string().max(CUSTOM_FIELD_LIMITS.descriptionMaxLength).nullable();
const options = z
  .array(z.string().regex(CUSTOM_FIELD_OPTION_PATTERN))
  .min(1)
  .max(CUSTOM_FIELD_LIMITS.optionsMax)
  .nullable()
  .openapi({ description: "Only for select and multiSelect: 1-200 distinct strings matching ^[A-Za-z0-9_ -]{1,64}$; can be added to, not removed from" });

/** `POST /api/v1/{entity}/fields`. */
export const customFieldCreateSchema = z
  .object({
    key,
    label,
    description: description.optional(),
    type: z.enum(customFieldTypes),
    required: z.boolean().optional(),
    unique: z.boolean().optional(),
    options: options.optional(),
    defaultValue: customFieldValueSchema.optional(),
  })
  .strict()
  .openapi("CustomFieldCreate", { example: { key: "externalId", label: "External id", type: "text", unique: true } });
export type CustomFieldCreate = z.infer<typeof customFieldCreateSchema>;

/** `PATCH /api/v1/{entity}/fields/{key}`: `key` and `unique` never change; `type` only text -> longText; `options` only grow. */
export const customFieldUpdateSchema = z
  .object({
    label: label.optional(),
    description: description.optional(),
    type: z.enum(customFieldTypes).optional(),
    required: z.boolean().optional(),
    options: options.optional(),
    defaultValue: customFieldValueSchema.optional(),
    isArchived: z.boolean().optional(),
  })
  .strict()
  .openapi("CustomFieldUpdate", { example: { label: "External reference", isArchived: false } });
export type CustomFieldUpdate = z.infer<typeof customFieldUpdateSchema>;

/** A definition as the API answers it. */
export const customFieldDefinitionSchema = z
  .object({
    key: z.string(),
    label: z.string(),
    description: z.string().nullable(),
    type: z.enum(customFieldTypes),
    required: z.boolean(),
    unique: z.boolean(),
    options: z.array(z.string()).nullable(),
    defaultValue: customFieldValueSchema,
    isArchived: z.boolean(),
    createdAt: z.string().openapi({ format: "date-time" }),
    updatedAt: z.string().openapi({ format: "date-time" }),
  })
  .openapi("CustomFieldDefinition");
export type CustomFieldDefinitionView = z.infer<typeof customFieldDefinitionSchema>;

/**
 * Internal header from the gateway to webhook-delivery on a webhook create or PUT whose `filter`
 * names custom fields (extensions §E1.5 with §E4): per entity the caller may read, the active
 * definitions among the keys the filter mentions, with their types, as JSON
 * `{"client": {"tier": "select"}, ...}`. crm-records owns the definitions; the gateway reaches both
 * services. Never taken from a client: the gateway forwards only its own list of request headers.
 */
export const CUSTOM_FIELD_TYPES_HEADER = "x-crm-custom-field-types";

/** What CUSTOM_FIELD_TYPES_HEADER carries: per entity, its active keys (of those asked about) and their types. */
export type DefinedCustomFields = Readonly<Partial<Record<string, Readonly<Record<string, CustomFieldType>>>>>;

/** The header's value read back; undefined when absent or not of its shape (then no key is checked). */
export function definedCustomFieldsOf(header: unknown): DefinedCustomFields | undefined {
  if (typeof header !== "string") return undefined;
  try {
    const parsed: unknown = JSON.parse(header);
    if (!isPlainObject(parsed)) return undefined;
    const defined: Record<string, Record<string, CustomFieldType>> = {};
    for (const [entity, fields] of Object.entries(parsed)) {
      if (!isPlainObject(fields)) return undefined;
      for (const type of Object.values(fields)) if (!customFieldTypes.includes(type as CustomFieldType)) return undefined;
      defined[entity] = fields as Record<string, CustomFieldType>;
    }
    return defined;
  } catch {
    return undefined;
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
