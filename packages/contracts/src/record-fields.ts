// The scalar fields of each entity's record as events carry it, typed for the `where` language:
// what a webhook filter (extensions §E1.5) may name and how it compares them. The same fields a
// list's `where` accepts; crm-records' entity definitions are checked against this table
// (services/crm-records/src/entities/entities.test.ts), ids being PostgreSQL uuid columns there.
import type { RecordEntity } from "./events";
import { contactTypes, invoiceStatuses, quoteStatuses } from "./records";

export type RecordFieldType = "string" | "decimal" | "boolean" | "datetime" | "enum" | "uuid";

export interface RecordField {
  type: RecordFieldType;
  nullable: boolean;
  enumValues?: readonly string[];
}

const f = (type: RecordFieldType, nullable = false): RecordField => ({ type, nullable });
const oneOf = (enumValues: readonly string[]): RecordField => ({ type: "enum", nullable: false, enumValues });
const ids = { id: f("uuid"), businessId: f("uuid") };
const times = { createdAt: f("datetime"), updatedAt: f("datetime") };

export const recordFields: Readonly<Record<RecordEntity, Readonly<Record<string, RecordField>>>> = {
  client: {
    ...ids,
    firstName: f("string"),
    lastName: f("string"),
    email: f("string", true),
    phone: f("string", true),
    companyName: f("string", true),
    notes: f("string", true),
    isActive: f("boolean"),
    ...times,
  },
  contact: { ...ids, clientId: f("uuid"), type: oneOf(contactTypes), value: f("string"), isPrimary: f("boolean"), ...times },
  invoice: {
    ...ids,
    number: f("string"),
    clientId: f("uuid"),
    status: oneOf(invoiceStatuses),
    currency: f("string"),
    issueDate: f("datetime", true),
    dueDate: f("datetime", true),
    notes: f("string", true),
    totalAmount: f("decimal"),
    ...times,
  },
  quote: {
    ...ids,
    number: f("string"),
    clientId: f("uuid"),
    status: oneOf(quoteStatuses),
    currency: f("string"),
    validUntil: f("datetime", true),
    notes: f("string", true),
    totalAmount: f("decimal"),
    ...times,
  },
  product: {
    ...ids,
    name: f("string"),
    description: f("string", true),
    sku: f("string", true),
    unitPrice: f("decimal"),
    currency: f("string"),
    isActive: f("boolean"),
    ...times,
  },
  service: {
    ...ids,
    name: f("string"),
    description: f("string", true),
    unitPrice: f("decimal"),
    unit: f("string", true),
    isActive: f("boolean"),
    ...times,
  },
  employee: {
    ...ids,
    firstName: f("string"),
    lastName: f("string"),
    email: f("string", true),
    phone: f("string", true),
    position: f("string", true),
    isActive: f("boolean"),
    ...times,
  },
};
