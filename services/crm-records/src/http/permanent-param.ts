import { validationError } from "@crm/errors";
import type { Request } from "express";

/**
 * `?permanent=` of a DELETE, on records (extensions §E5: purge a trashed record) and on custom field
 * definitions (§E4: remove an archived one): "true" or "false", absent meaning false; anything else is 400001.
 */
export function permanentParam(req: Request): boolean {
  const value = req.query["permanent"];
  if (value === undefined || value === "false") return false;
  if (value === "true") return true;
  throw validationError("permanent", 'Expected "true" or "false"');
}
