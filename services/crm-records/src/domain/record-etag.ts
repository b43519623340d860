// Entity tags of records (extensions §E2.3): a strong ETag over the record's own state (its fields
// and, for invoices and quotes, its items), the same whether read, written or deleted, and whatever
// relations a read embedded (those are records of their own, with their own ETags).
import { createHash } from "node:crypto";
import { CUSTOM_FIELDS_PROPERTY } from "@crm/contracts";
import type { EntityDefinition } from "../entities";
import type { RecordView } from "./record.serializer";

/** `"<22 base64url characters>"`: the first 128 bits of SHA-256 over the record's own JSON. */
export function recordEtag(definition: EntityDefinition, view: RecordView): string {
  const own: RecordView = {};
  const items = definition.document?.itemsRelation;
  for (const name of Object.keys(definition.columns)) {
    if (name === "totalAmount" && items) own[items] = view[items];
    own[name] = view[name];
  }
  // Custom values (extensions §E4) as the record's answer shows them: archiving a definition changes the answer, so the tag.
  if (view[CUSTOM_FIELDS_PROPERTY] !== undefined) own[CUSTOM_FIELDS_PROPERTY] = view[CUSTOM_FIELDS_PROPERTY];
  return `"${createHash("sha256").update(JSON.stringify(own)).digest("base64url").slice(0, 22)}"`;
}

/** The entity tags of an If-Match / If-None-Match value; `"*"` for the wildcard. Weak tags keep their W/. */
function entityTags(header: string): string[] {
  const value = header.trim();
  if (value === "*") return ["*"];
  return value.match(/(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"/g) ?? [];
}

/**
 * If-Match (RFC 9110 §13.1.1): strong comparison, so a weak tag never matches; `*` matches any
 * existing record. Absent: no precondition. Anything else, malformed included, fails (412000).
 */
export function ifMatchHolds(header: string | undefined, current: string): boolean {
  if (header === undefined) return true;
  return entityTags(header).some((tag) => tag === "*" || tag === current);
}

/** If-None-Match (RFC 9110 §13.1.2) on a read: weak comparison; true means "not modified" (304). */
export function noneMatchFails(header: string | undefined, current: string): boolean {
  if (header === undefined) return false;
  const strip = (tag: string) => (tag.startsWith("W/") ? tag.slice(2) : tag);
  return entityTags(header).some((tag) => tag === "*" || strip(tag) === strip(current));
}
