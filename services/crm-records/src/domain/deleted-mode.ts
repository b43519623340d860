// Extensions §E5: which records a read sees. `deleted=exclude` (the default) the live ones,
// `only` the trash, `include` both; the same parameter on lists and on GET of one record.
import { type DeletedMode, deletedModes } from "@crm/contracts";
import { validationError } from "@crm/errors";

export type { DeletedMode };

/** The request's `deleted` parameter; 400001 at path `deleted` for any other value (or one given twice). */
export function parseDeletedMode(raw: unknown): DeletedMode {
  if (raw === undefined) return "exclude";
  if (typeof raw === "string" && (deletedModes as readonly string[]).includes(raw)) return raw as DeletedMode;
  throw validationError("deleted", `Expected one of ${deletedModes.join(", ")}`);
}
