// `page` / `perPage` and the list `meta` (interface §2 "Pagination meta", decisions §3).
import { type ErrorDetail, errors } from "@crm/errors";
import { DEFAULT_PAGE, DEFAULT_PER_PAGE, MAX_PER_PAGE } from "./limits.constants";
import type { PaginationMeta } from "./query.types";

// Digits only: "1.5", "1e2", "+1", " 1" and "" are not what a client meant by a page number.
const POSITIVE_INTEGER_TEXT = /^\d+$/;

export interface Pagination {
  page: number;
  perPage: number;
  skip: number;
  take: number;
}

/**
 * Reads both parameters and reports every problem at once (400001 with one detail per
 * parameter), the way body validation does. Returns the problems instead of throwing so
 * `parseListQuery` can decide the order of checks.
 */
export function readPagination(query: Record<string, unknown>): { pagination: Pagination; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const page = readPositiveInteger(query["page"], "page", DEFAULT_PAGE, details);
  // Above the maximum is not an error: the page is simply capped (decisions §3).
  const perPage = Math.min(readPositiveInteger(query["perPage"], "perPage", DEFAULT_PER_PAGE, details), MAX_PER_PAGE);
  const skip = (page - 1) * perPage;
  if (details.length === 0 && !Number.isSafeInteger(skip)) details.push({ path: "page", message: "page is too large" });
  return { pagination: { page, perPage, skip, take: perPage }, details };
}

/** For endpoints that paginate but take no other list parameters (the webhook delivery log). */
export function parsePagination(query: Record<string, unknown>): Pagination {
  const { pagination, details } = readPagination(query);
  if (details.length > 0) throw errors.validationFailed(details);
  return pagination;
}

function readPositiveInteger(raw: unknown, path: string, fallback: number, details: ErrorDetail[]): number {
  if (raw === undefined) return fallback;
  let value: number | undefined;
  if (typeof raw === "string" && POSITIVE_INTEGER_TEXT.test(raw)) value = Number(raw);
  else if (typeof raw === "number" && Number.isInteger(raw)) value = raw;
  if (value === undefined || value < 1) {
    details.push({ path, message: `${path} must be an integer greater than or equal to 1` });
    return fallback;
  }
  // perPage is capped afterwards, so only page can meaningfully exceed this.
  if (!Number.isSafeInteger(value)) {
    if (path === "perPage") return MAX_PER_PAGE;
    details.push({ path, message: `${path} is too large` });
    return fallback;
  }
  return value;
}

export function paginationMeta(total: number, page: number, perPage: number): PaginationMeta {
  const lastPage = total === 0 ? 0 : Math.ceil(total / perPage);
  return {
    total,
    lastPage,
    currentPage: page,
    perPage,
    prev: page > 1 ? page - 1 : null,
    next: page < lastPage ? page + 1 : null,
  };
}
