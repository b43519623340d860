import { z } from "./zod";
import type { ZodType } from "zod";

/** Pagination meta of every list response (interface §2). */
export const paginationMetaSchema = z
  .object({
    total: z.number().int(),
    lastPage: z.number().int(),
    currentPage: z.number().int(),
    perPage: z.number().int(),
    prev: z.number().int().nullable(),
    next: z.number().int().nullable(),
  })
  .openapi("PaginationMeta");
export type PaginationMeta = z.infer<typeof paginationMetaSchema>;

const nextCursor = z.string().nullable().openapi({ description: "Opaque cursor of the next page (`?cursor=`), or null when nothing follows this page" });

/** Meta of a record list (extensions §E2.1): the page meta plus nextCursor, or only perPage and nextCursor in cursor mode. */
export const recordListMetaSchema = z
  .union([paginationMetaSchema.extend({ nextCursor }).openapi("RecordPageMeta"), z.object({ perPage: z.number().int(), nextCursor }).openapi("RecordCursorMeta")])
  .openapi("RecordListMeta");
export type RecordListMeta = z.infer<typeof recordListMetaSchema>;

/** `page` and `perPage` of every list endpoint (the query language parses them; this describes them). */
export const paginationQuerySchema = z.object({
  page: z
    .number()
    .int()
    .min(1)
    .optional()
    .openapi({ param: { name: "page", in: "query" }, description: "1-based page number (default 1); not a positive integer: 400001", example: 1 }),
  perPage: z
    .number()
    .int()
    .min(1)
    .optional()
    .openapi({ param: { name: "perPage", in: "query" }, description: "Items per page (default 10; above 100 is capped at 100); not a positive integer: 400001", example: 10 }),
});

export const errorEnvelopeSchema = z
  .object({
    success: z.literal(false),
    error: z.object({
      code: z.number().int().openapi({ example: 400001 }),
      message: z.string().openapi({ example: "Validation failed" }),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
    }),
  })
  .openapi("ErrorEnvelope", {
    example: { success: false, error: { code: 400001, message: "Validation failed", details: [{ path: "items.0.quantity", message: "Too small: expected number to be >0" }] } },
  });

export function dataEnvelope<T extends ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

export function listEnvelope<T extends ZodType>(item: T) {
  return z.object({ success: z.literal(true), data: z.array(item), meta: paginationMetaSchema });
}

/** A record list: its meta also carries nextCursor (extensions §E2.1). */
export function recordListEnvelope<T extends ZodType>(item: T) {
  return z.object({ success: z.literal(true), data: z.array(item), meta: recordListMetaSchema });
}

/** Success bodies, built in one place so every service answers the same shape. */
export function ok<T>(data: T): { success: true; data: T } {
  return { success: true, data };
}

export function okList<T, M extends PaginationMeta | RecordListMeta = PaginationMeta>(data: T[], meta: M): { success: true; data: T[]; meta: M } {
  return { success: true, data, meta };
}
