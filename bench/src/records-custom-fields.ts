// The custom fields of the records benchmark (extensions §E4, issue 39): the twenty definitions a
// business of the `create-cf20` and `cf` rows defines, how they are defined (the public API), and the
// seeded businesses of the `cf` rows.
import type { Client } from "pg";
import { signUp, type Caller } from "./records-caller";
import { seedClients } from "./records-seed";

export type Definition = Record<string, unknown> & { key: string; type: string };

/**
 * Twenty custom fields of every sortable type and a multiSelect (extensions E4), and a value for each:
 * the `create-cf20` row's business defines them, its creates send them all.
 */
export const CF20_FIELDS: Array<{ definition: Definition; value: unknown }> = Array.from({ length: 20 }, (_, i) => {
  const kinds = [
    { type: "text", value: `value ${i}` },
    { type: "number", value: 1234.5 + i },
    { type: "integer", value: 42 + i },
    { type: "boolean", value: i % 2 === 0 },
    { type: "date", value: "2024-05-17" },
    { type: "dateTime", value: "2024-05-17T10:20:30.000Z" },
    { type: "select", value: "b", options: ["a", "b", "c"] },
    { type: "multiSelect", value: ["a", "c"], options: ["a", "b", "c"] },
  ];
  const { type, value, options } = kinds[i % kinds.length] as { type: string; value: unknown; options?: string[] };
  return { definition: { key: `f${i}`, label: `Field ${i}`, type, ...(options ? { options } : {}) }, value };
});

/** Defines `definitions` on the caller's clients through the gateway, one at a time, as an administrator would. */
export async function defineClientFields(baseUrl: string, caller: Caller, definitions: readonly Definition[]): Promise<void> {
  for (const definition of definitions) {
    const res = await fetch(`${baseUrl}/api/v1/client/fields`, { method: "POST", headers: caller.headers.gateway, body: JSON.stringify(definition) });
    if (res.status !== 201) throw new Error(`custom field definition ${definition.key}: ${res.status} ${await res.text()}`);
  }
}

/** Text field `code`: each seeded client holds its last name in it too, so a query on it answers what the same one on `lastName` does. */
export const CODE_FIELD: Definition = { key: "code", label: "Code", type: "text" };
/** The first boolean of the twenty: each seeded client holds its `isActive` in it, so a filter on it selects what `isActive` does. */
export const ACTIVE_FIELD: Definition = CF20_FIELDS.find((f) => f.definition.type === "boolean")!.definition;

/**
 * A business of `size` clients defining CODE_FIELD and the twenty (issue 39: "20 custom fields defined"),
 * every client holding a value of each, then statistics as autovacuum would gather them: without, the
 * planner guesses and may read every sort value of the key (the primary key's range) instead of the sort
 * index's range.
 */
export async function seedCustomFieldBusiness(db: Client, baseUrl: string, internalTokenSecret: string, name: string, size: number): Promise<Caller> {
  const caller = await signUp(baseUrl, name, internalTokenSecret);
  await defineClientFields(baseUrl, caller, [CODE_FIELD, ...CF20_FIELDS.map((f) => f.definition)]);
  const constant = Object.fromEntries(CF20_FIELDS.map((f) => [f.definition.key, f.value]));
  await seedClients(db, caller.businessId, size, { constant, lastNameKey: CODE_FIELD.key, isActiveKey: ACTIVE_FIELD.key });
  await db.query(`ANALYZE "records"."Client", "records"."CustomFieldSortValue"`);
  return caller;
}
