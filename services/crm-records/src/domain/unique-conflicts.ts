// The answer when a unique custom field's value (extensions §E4) is held already: 409001 at the
// field's path, `items.<i>.customFields.<key>` for a batch item.
import { CUSTOM_FIELDS_PROPERTY } from "@crm/contracts";
import { errors } from "@crm/errors";

/** 409001 at the unique custom field's path (`items.<i>.customFields.<key>` for a batch item). */
export function uniqueTaken(key: string, index: number | undefined, cause?: unknown) {
  const path = `${index === undefined ? "" : `items.${index}.`}${CUSTOM_FIELDS_PROPERTY}.${key}`;
  return errors.alreadyExists([{ path, message: "Another record already holds this value of a unique custom field" }], { cause });
}

/** Two items of one batch with the same unique value: the second is named, before anything is written. */
export function checkBatchUnique(unique: ReadonlyArray<{ key: string; value: string; index: number }>, batch: boolean): void {
  const seen = new Set<string>();
  for (const u of unique) {
    const id = `${u.key}\u0000${u.value}`;
    if (seen.has(id)) throw uniqueTaken(u.key, batch ? u.index : undefined);
    seen.add(id);
  }
}
