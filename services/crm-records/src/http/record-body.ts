// Request bodies of record writes: a JSON object whose fields are the entity's writable ones.
// Read-only fields get their own message (they are known, just not the client's to set); every
// other unknown field is named by the strict schema. All problems are reported at once.
import { CUSTOM_FIELDS_PROPERTY, readOnlyRecordFields, RECORD_BATCH_MAX_ITEMS } from "@crm/contracts";
import { type ErrorDetail, errors, zodIssuesToDetails } from "@crm/errors";
import type { ZodType } from "zod";

const READ_ONLY: ReadonlySet<string> = new Set(readOnlyRecordFields);

export function parseRecordBody(schema: ZodType, body: unknown): Record<string, unknown> {
  // No body at all is an empty object: a create then fails on its required fields.
  const { value, details } = checkRecordBody(schema, body === undefined ? {} : body);
  if (details.length > 0) throw errors.validationFailed(details.map((d) => ({ ...d, path: d.path || "body" })));
  return value!;
}

/**
 * `POST /{entity}/batch` (extensions §E2.2): `{"items": [...]}` with 1 to RECORD_BATCH_MAX_ITEMS
 * create bodies. Every problem of every item is reported at once, named `items.<i>.<field>`.
 */
export function parseBatchBody(schema: ZodType, body: unknown): Array<Record<string, unknown>> {
  const input = body === undefined ? {} : body;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw errors.validationFailed([{ path: "body", message: "Expected a JSON object" }]);
  }
  const details: ErrorDetail[] = [];
  for (const key of Object.keys(input)) if (key !== "items") details.push({ path: key, message: `Unknown field "${key}"` });
  const items = (input as Record<string, unknown>)["items"];
  if (!Array.isArray(items) || items.length < 1 || items.length > RECORD_BATCH_MAX_ITEMS) {
    details.push({ path: "items", message: `Expected an array of 1 to ${RECORD_BATCH_MAX_ITEMS} records` });
    throw errors.validationFailed(details);
  }
  const values = items.map((item, i) => {
    const checked = checkRecordBody(schema, item);
    details.push(...checked.details.map((d) => ({ ...d, path: d.path ? `items.${i}.${d.path}` : `items.${i}` })));
    return checked.value!;
  });
  if (details.length > 0) throw errors.validationFailed(details);
  return values;
}

/** One body's value, or its problems with paths inside it ("" for the body itself). */
function checkRecordBody(schema: ZodType, input: unknown): { value?: Record<string, unknown>; details: ErrorDetail[] } {
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return { details: [{ path: "", message: "Expected a JSON object" }] };
  }
  const details: ErrorDetail[] = [];
  const rest: Record<string, unknown> = {};
  let custom: unknown;
  for (const [key, value] of Object.entries(input)) {
    // Custom values (extensions §E4) depend on the business's definitions: the service checks them.
    if (key === CUSTOM_FIELDS_PROPERTY) custom = value;
    else if (READ_ONLY.has(key)) {
      details.push({
        path: key,
        message: key === "businessId" ? "businessId comes from the caller's credentials and cannot be set" : `${key} is read-only`,
      });
    } else {
      rest[key] = value;
    }
  }
  const result = schema.safeParse(rest);
  if (!result.success) details.push(...zodIssuesToDetails(result.error.issues));
  if (details.length > 0) return { details };
  const value = result.data as Record<string, unknown>;
  return { value: custom === undefined ? value : { ...value, [CUSTOM_FIELDS_PROPERTY]: custom }, details };
}
