import type { ZodType, core } from "zod";
import type { ErrorDetail } from "./app-error";
import { errors } from "./errors";

/** zod issues -> `details` with dot-joined paths; unknown keys become one detail per key. */
export function zodIssuesToDetails(issues: readonly core.$ZodIssue[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const issue of issues) {
    const base = issue.path.map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) details.push({ path: [...base, key].join("."), message: `Unknown field "${key}"` });
    } else {
      details.push({ path: base.join("."), message: issue.message });
    }
  }
  return details;
}

/** Validates `input` against `schema`; failures become 400001 with details. */
export function parseOrThrow<T>(schema: ZodType<T>, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) throw errors.validationFailed(zodIssuesToDetails(result.error.issues));
  return result.data;
}
