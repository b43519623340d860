// What an update changed, for `{entity}.updated` events (extensions §E1.4): for every field whose
// value differs, the value before, exactly as GET showed it. `items` is one field; fields the change
// recomputed (`totalAmount`) count like any other; `updatedAt` always changes, so it is left out.
import { isDeepStrictEqual } from "node:util";
import { CUSTOM_FIELDS_PROPERTY } from "@crm/contracts";
import type { RecordView } from "./record.serializer";

const IGNORED: ReadonlySet<string> = new Set(["updatedAt"]);

export function previousAttributes(before: RecordView, after: RecordView): RecordView {
  const changed: RecordView = {};
  for (const [field, value] of Object.entries(before)) {
    if (IGNORED.has(field)) continue;
    if (field === CUSTOM_FIELDS_PROPERTY) {
      // Extensions §E4: only the custom fields that changed.
      const changedKeys = previousAttributes((value ?? {}) as RecordView, (after[field] ?? {}) as RecordView);
      if (Object.keys(changedKeys).length > 0) changed[field] = changedKeys;
      continue;
    }
    if (!isDeepStrictEqual(value, after[field])) changed[field] = value;
  }
  return changed;
}
