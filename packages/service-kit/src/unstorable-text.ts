import type { ErrorDetail } from "@crm/errors";

/** At most this many findings are reported: enough to fix a request, bounded for a hostile one. */
const MAX_REPORTED = 20;

export const NUL_MESSAGE = "Must not contain a NUL character";
export const LONE_SURROGATE_MESSAGE = "Must not contain a lone UTF-16 surrogate";

/**
 * A high surrogate not followed by a low one, or a low one not preceded by a high one (no `u` flag:
 * the pattern reads UTF-16 code units). JSON's `"\ud800"` escapes parse into such strings, which are
 * not Unicode text: no UTF-8 encoding of them exists.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why PostgreSQL (or the driver on the way to it) cannot store `text`, or undefined when it can. */
function unstorable(text: string): string | undefined {
  if (text.includes("\u0000")) return NUL_MESSAGE;
  if (LONE_SURROGATE.test(text)) return LONE_SURROGATE_MESSAGE;
  return undefined;
}

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
 * Every place in a parsed JSON value where a string (or an object key) holds text the database cannot
 * store, as 400001 details with dot-joined paths (`items.0.description`): U+0000 (PostgreSQL `text`
 * cannot hold it) and a lone UTF-16 surrogate (`"\udc00"` in JSON; no UTF-8 encoding exists, and the
 * driver refuses it). Either would fail deep in the database driver as a 500; finding it here, on the
 * parsed body every service reads, covers every field of every schema, present and future, without
 * any schema opting in.
 * The walk uses an explicit stack: a 1 MiB body may nest hundreds of thousands of levels deep.
 */
export function unstorableTextDetails(value: unknown): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const stack: Step[] = [{ value, key: undefined, parent: undefined }];
  while (stack.length > 0 && details.length < MAX_REPORTED) {
    const step = stack.pop()!;
    const current = step.value;
    if (typeof current === "string") {
      const reason = unstorable(current);
      if (reason !== undefined) details.push({ path: pathOf(step), message: reason });
    } else if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) stack.push({ value: current[i], key: String(i), parent: step });
    } else if (current !== null && typeof current === "object") {
      const keys = Object.keys(current);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        const reason = unstorable(key);
        if (reason !== undefined) details.push({ path: pathOf(step, key), message: reason });
        else stack.push({ value: (current as Record<string, unknown>)[key], key, parent: step });
      }
    }
  }
  return details.slice(0, MAX_REPORTED);
}
