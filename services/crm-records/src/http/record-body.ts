// Request bodies of record writes: a JSON object whose fields are the entity's writable ones.
// Read-only fields get their own message (they are known, just not the client's to set); every
// other unknown field is named by the strict schema. All problems are reported at once.
import { readOnlyRecordFields } from "@crm/contracts";
import { type ErrorDetail, errors, zodIssuesToDetails } from "@crm/errors";
import type { ZodType } from "zod";

const READ_ONLY: ReadonlySet<string> = new Set(readOnlyRecordFields);

export function parseRecordBody(schema: ZodType, body: unknown): Record<string, unknown> {
  // No body at all is an empty object: a create then fails on its required fields.
  const input = body === undefined ? {} : body;
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw errors.validationFailed([{ path: "body", message: "Expected a JSON object" }]);
  }
  const details: ErrorDetail[] = [];
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (READ_ONLY.has(key)) {
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
  if (details.length > 0) throw errors.validationFailed(details);
  return result.data as Record<string, unknown>;
}
