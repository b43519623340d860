// The only errors the query language throws. The response body stays exactly the catalogue's
// `{code, message}` (the interface shows no details for 400011/400019); the precise reason rides
// along as the internal `cause`, which is logged and which tests assert on, never sent.
import { type AppError, errors } from "@crm/errors";

export function invalidQuery(reason: string): AppError {
  return errors.invalidQuery(undefined, { cause: reason });
}

export function invalidOrderBy(reason: string): AppError {
  return errors.invalidSortOrder(undefined, { cause: reason });
}

/** `Object.hasOwn` keeps names like `constructor` or `__proto__` from matching inherited members. */
export function hasOwn(record: object, key: string): boolean {
  return Object.hasOwn(record, key);
}
