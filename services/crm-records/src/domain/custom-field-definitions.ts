// Custom field definitions (extensions §E4): the rules a new definition and a change to one must keep,
// beyond the shape the contract's schemas check. Pure: the caller reads the entity's definitions (in
// the transaction that serialises the business's definition writes) and writes what these return.
import {
  CUSTOM_FIELD_LIMITS,
  CUSTOM_FIELDS_PROPERTY,
  truncatedRelationField,
  type CustomFieldCreate,
  type CustomFieldDefinitionView,
  type CustomFieldUpdate,
} from "@crm/contracts";
import { type ErrorDetail, errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { builtInFields } from "./field-selection";
import { checkValue, isSelectType, type CustomFieldRule, type CustomFieldValue } from "./custom-field-values";

/** A stored definition. */
export interface CustomFieldDefinition extends CustomFieldRule {
  label: string;
  description: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The writable part of a definition: what a create or a change decides. */
export type DefinitionValues = Omit<CustomFieldDefinition, "createdAt" | "updatedAt">;

/** Names a key may not take on this entity: its built-in fields, relations, their truncation flags, and `customFields` itself. */
export function reservedKeys(definition: EntityDefinition): ReadonlySet<string> {
  const names = new Set([...builtInFields(definition), CUSTOM_FIELDS_PROPERTY]);
  for (const relation of Object.keys(definition.relations)) {
    names.add(relation);
    names.add(truncatedRelationField(relation));
  }
  return names;
}

/** The options' own rules (distinct; only for the select types, which need them). */
function optionDetails(type: CustomFieldRule["type"], options: readonly string[] | null): ErrorDetail[] {
  if (isSelectType(type)) {
    if (options === null) return [{ path: "options", message: `Required for type ${type}` }];
    if (new Set(options).size !== options.length) return [{ path: "options", message: "Options must be distinct" }];
    return [];
  }
  return options === null ? [] : [{ path: "options", message: "Only the select and multiSelect types have options" }];
}

function defaultDetails(rule: Pick<CustomFieldRule, "type" | "options">, value: CustomFieldValue | null): { value: CustomFieldValue | null; details: ErrorDetail[] } {
  if (value === null) return { value: null, details: [] };
  const checked = checkValue(rule, value);
  return "problem" in checked ? { value: null, details: [{ path: "defaultValue", message: checked.problem }] } : { value: checked.value, details: [] };
}

/**
 * A new definition of `entity`, given the entity's existing ones (archived included): a reserved key
 * is 400001, a key already defined 409001, a 101st definition or an 11th unique one 409006.
 */
export function newDefinition(entity: EntityDefinition, existing: readonly CustomFieldRule[], input: CustomFieldCreate): DefinitionValues {
  const details: ErrorDetail[] = [];
  if (reservedKeys(entity).has(input.key)) details.push({ path: "key", message: `"${input.key}" is a built-in field or relation of ${entity.entity}` });
  const options = input.options ?? null;
  details.push(...optionDetails(input.type, options));
  const fallback = details.length === 0 ? defaultDetails({ type: input.type, options }, input.defaultValue ?? null) : { value: null, details: [] };
  details.push(...fallback.details);
  if (details.length > 0) throw errors.validationFailed(details);
  if (existing.some((rule) => rule.key === input.key)) throw errors.alreadyExists([{ path: "key", message: `"${input.key}" is already defined (archived ones included)` }]);
  if (existing.length >= CUSTOM_FIELD_LIMITS.perEntity) throw errors.limitReached([{ path: "key", message: `At most ${CUSTOM_FIELD_LIMITS.perEntity} custom fields per entity` }]);
  const unique = input.unique ?? false;
  if (unique && existing.filter((rule) => rule.unique).length >= CUSTOM_FIELD_LIMITS.uniquePerEntity) {
    throw errors.limitReached([{ path: "unique", message: `At most ${CUSTOM_FIELD_LIMITS.uniquePerEntity} unique custom fields per entity` }]);
  }
  return {
    key: input.key,
    label: input.label,
    description: input.description ?? null,
    type: input.type,
    required: input.required ?? false,
    unique,
    options: options === null ? null : [...options],
    defaultValue: fallback.value,
    isArchived: false,
  };
}

/**
 * A definition after `change`: `type` only from text to longText, options only added to, defaultValue
 * checked against the result (400001 at the field otherwise).
 */
export function changedDefinition(current: DefinitionValues, change: CustomFieldUpdate): DefinitionValues {
  const details: ErrorDetail[] = [];
  const type = change.type ?? current.type;
  if (type !== current.type && !(current.type === "text" && type === "longText")) {
    details.push({ path: "type", message: `The type cannot change from ${current.type} to ${type} (only text to longText)` });
  }
  let options = current.options;
  if (change.options !== undefined) {
    options = change.options;
    const optionProblems = optionDetails(type, options);
    details.push(...optionProblems);
    if (optionProblems.length === 0) {
      const kept = options ?? [];
      const removed = (current.options ?? []).filter((option) => !kept.includes(option));
      if (removed.length > 0) details.push({ path: "options", message: `Options cannot be removed: ${removed.join(", ")}` });
    }
  }
  const next: DefinitionValues = {
    ...current,
    label: change.label ?? current.label,
    description: change.description === undefined ? current.description : change.description,
    type,
    required: change.required ?? current.required,
    options: options === null ? null : [...options],
    isArchived: change.isArchived ?? current.isArchived,
  };
  if (details.length > 0) throw errors.validationFailed(details);
  const fallback = defaultDetails(next, change.defaultValue === undefined ? current.defaultValue : change.defaultValue);
  if (fallback.details.length > 0) throw errors.validationFailed(fallback.details);
  return { ...next, defaultValue: fallback.value };
}

/** A definition as the API answers it. */
export function definitionView(definition: CustomFieldDefinition): CustomFieldDefinitionView {
  return {
    key: definition.key,
    label: definition.label,
    description: definition.description,
    type: definition.type,
    required: definition.required,
    unique: definition.unique,
    options: definition.options === null ? null : [...definition.options],
    defaultValue: definition.defaultValue,
    isArchived: definition.isArchived,
    createdAt: definition.createdAt.toISOString(),
    updatedAt: definition.updatedAt.toISOString(),
  };
}
