// The custom fields of the records benchmark (extensions §E4, issue 39): the twenty definitions a
// business of the `create-cf20` and `cf` rows defines, and how they are defined (the public API).
import type { Caller } from "./records-caller";

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
