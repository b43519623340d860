import type { ErrorDetail } from "@crm/errors";

/** At most this many NUL findings are reported: enough to fix a request, bounded for a hostile one. */
const MAX_REPORTED = 20;

export const NUL_MESSAGE = "Must not contain a NUL character";

/** A position in the walked value; paths are linked to the parent so deep nesting costs O(1) each. */
interface Step {
  value: unknown;
  key: string | undefined;
  parent: Step | undefined;
}

function pathOf(step: Step | undefined, lastKey?: string): string {
  const keys: string[] = lastKey === undefined ? [] : [lastKey];
  for (let s = step; s && s.key !== undefined; s = s.parent) keys.push(s.key);
  return keys.reverse().join(".");
}

/**
 * Every place in a parsed JSON value where a string (or an object key) holds U+0000, as 400001
 * details with dot-joined paths (`items.0.description`). PostgreSQL `text` cannot store NUL, so such
 * a value would fail deep in the database driver; finding it here, on the parsed body every service
 * reads, covers every field of every schema, present and future, without any schema opting in.
 * The walk uses an explicit stack: a 1 MiB body may nest hundreds of thousands of levels deep.
 */
export function unstorableTextDetails(value: unknown): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const stack: Step[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length > 0 && details.length < MAX_REPORTED) {
    const step = stack.pop()!;
    const current = step.value;
    if (typeof current === "string") {
      if (current.includes("\u0000")) details.push({ path: pathOf(step), message: NUL_MESSAGE });
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], key: String(i), parent: step });
    } else if (current !== null && typeof current === "object") {
      const keys = Object.keys(current);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        if (key.includes("\u0000")) details.push({ path: pathOf(step, key), message: NUL_MESSAGE });
        else stack.push({ value: (current as Record<string, unknown>)[key], key, parent: step });
      }
    }
  }
  return details.slice(0, MAX_REPORTED);
}
