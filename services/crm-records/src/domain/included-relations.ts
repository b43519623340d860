// The include cap: a to-many relation in a response holds at most `limit` related records, the
// newest first. The query reads one more than that, so a cut can be told from an exact fit, and a
// cut relation is flagged on its parent (`invoicesTruncated: true`), never silently shortened.
import { truncatedRelationField } from "@crm/contracts";
import type { EntityDefinition } from "../entities";
import type { RecordView } from "./record.serializer";

/** Rows to read per parent and to-many relation for a cap of `limit`. */
export function includedRowsToRead(limit: number): number {
  return limit + 1;
}

/** Cuts every to-many relation of `view` to `limit` records and flags the ones it cut. */
export function capIncludedRelations(view: RecordView, definition: EntityDefinition, limit: number): RecordView {
  for (const [name, relation] of Object.entries(definition.relations)) {
    const related = view[name];
    if (relation.kind !== "many" || !Array.isArray(related) || related.length <= limit) continue;
    view[name] = related.slice(0, limit);
    view[truncatedRelationField(name)] = true;
  }
  return view;
}
