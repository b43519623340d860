// Shared by the tests only: a spec exercising every field type, nullable and not, and a helper
// that captures what a parser threw so tables can compare codes and reasons.
import { AppError } from "@crm/errors";
import type { QuerySpec } from "./query.types";

export const INVOICE_STATUSES = ["DRAFT", "SENT", "PAID", "OVERDUE", "VOID"] as const;

export const testSpec: QuerySpec = {
  fields: {
    id: { type: "uuid", nullable: false },
    businessId: { type: "uuid", nullable: false },
    clientId: { type: "uuid", nullable: true },
    firstName: { type: "string", nullable: false },
    lastName: { type: "string", nullable: false },
    email: { type: "string", nullable: true },
    notes: { type: "string", nullable: true },
    isActive: { type: "boolean", nullable: false },
    isVip: { type: "boolean", nullable: true },
    status: { type: "enum", nullable: false, enumValues: INVOICE_STATUSES },
    priority: { type: "enum", nullable: true, enumValues: ["LOW", "HIGH"] },
    totalAmount: { type: "decimal", nullable: false },
    discount: { type: "decimal", nullable: true },
    quantity: { type: "int", nullable: false },
    score: { type: "int", nullable: true },
    createdAt: { type: "datetime", nullable: false },
    updatedAt: { type: "datetime", nullable: false },
    dueDate: { type: "datetime", nullable: true },
  },
  relations: {
    contacts: { default: true },
    invoices: { default: false },
    quotes: { default: false },
  },
};

/** What `fn` threw, or undefined; lets table tests check the code and the internal reason. */
export function thrownBy(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  return undefined;
}

/** True when `error` is exactly one of the query language's own errors. */
export function isQueryError(error: unknown, codes: readonly number[]): boolean {
  return error instanceof AppError && codes.includes(error.code);
}
