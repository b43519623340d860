// The only errors the query language throws. Code and message stay exactly the catalogue's
// (400019 "Invalid query format", 400011 "Invalid sorting order"); `details` says where:
// `[{path, message}]` with the parameter (`where`, `orderBy`, `include`) as the path and a message
// naming the field, cast, relation or character position. The same reason is the error's `cause`
// (logged; webhook filters report it under their own path).
import { type AppError, errors } from "@crm/errors";

/** The list parameter a query error is about: its `details[0].path`. */
export type QueryParameter = "where" | "orderBy" | "include";

/** Longest piece of the client's own input a message repeats. */
const MAX_QUOTED = 60;

/** The client's text as a message quotes it: in double quotes, cut to a readable length. */
export function quoted(text: string): string {
  const points = Array.from(text);
  return `"${points.length > MAX_QUOTED ? `${points.slice(0, MAX_QUOTED).join("")}…` : text}"`;
}

function queryError(path: Exclude<QueryParameter, "orderBy">, reason: string): AppError {
  return errors.invalidQuery([{ path, message: reason }], { cause: reason });
}

export function invalidWhere(reason: string): AppError {
  return queryError("where", reason);
}

export function invalidInclude(reason: string): AppError {
  return queryError("include", reason);
}

export function invalidOrderBy(reason: string): AppError {
  return errors.invalidSortOrder([{ path: "orderBy", message: reason }], { cause: reason });
}

/** `Object.hasOwn` keeps names like `constructor` or `__proto__` from matching inherited members. */
export function hasOwn(record: object, key: string): boolean {
  return Object.hasOwn(record, key);
}
