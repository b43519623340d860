// Response schemas of the CRM-records context (interface §4; decisions §3): every record's fields in
// response order, and what GET returns. Events carry the same objects without relations.
import { customFieldsSchema } from "./custom-fields";
import { z } from "./zod";
import type { RecordEntity } from "./events";
import { enumField, recordField, type RecordField } from "./record-fields";
import { contactTypes, invoiceStatuses, quoteStatuses } from "./record-requests";

/**
 * Most related records one parent carries per to-many relation in a response (`include=invoices`,
 * the default `contacts`): the newest ones (createdAt desc, id desc). Beyond it the relation holds
 * those and the parent gains `<relation>Truncated: true`; list the rest with the relation's own list
 * endpoint (e.g. `GET /invoice?where=clientId:<id>`). Configurable per deployment (INCLUDE_MAX_PER_RELATION).
 */
export const DEFAULT_INCLUDE_MAX_PER_RELATION = 100;

/** The field that says a to-many relation was cut to the include cap. */
export function truncatedRelationField(relation: string): string {
  return `${relation}Truncated`;
}
// ---------------------------------------------------------------------------------------------
// Fields: every scalar field of each entity's record, in response order (the columns of its Prisma
// model, in the same order). The response schemas below, the contracts' `fields` and so crm-records'
// columns, the query language's allow-lists and webhook filters all derive from these.

const idFields = { id: recordField("uuid"), businessId: recordField("uuid") };
/** `deletedAt`: null while the record is live, the time it moved to the trash otherwise (extensions §E5). */
const timeFields = { createdAt: recordField("datetime"), updatedAt: recordField("datetime"), deletedAt: recordField("datetime", true) };

export const clientFields = {
  ...idFields,
  firstName: recordField("string"),
  lastName: recordField("string"),
  email: recordField("string", true),
  phone: recordField("string", true),
  companyName: recordField("string", true),
  notes: recordField("string", true),
  isActive: recordField("boolean"),
  ...timeFields,
};
export const contactFields = {
  ...idFields,
  clientId: recordField("uuid"),
  type: enumField(contactTypes),
  value: recordField("string"),
  isPrimary: recordField("boolean"),
  ...timeFields,
};
export const invoiceFields = {
  ...idFields,
  number: recordField("string"),
  clientId: recordField("uuid"),
  status: enumField(invoiceStatuses),
  currency: recordField("string"),
  issueDate: recordField("datetime", true),
  dueDate: recordField("datetime", true),
  notes: recordField("string", true),
  totalAmount: recordField("decimal"),
  ...timeFields,
};
export const quoteFields = {
  ...idFields,
  number: recordField("string"),
  clientId: recordField("uuid"),
  status: enumField(quoteStatuses),
  currency: recordField("string"),
  validUntil: recordField("datetime", true),
  notes: recordField("string", true),
  totalAmount: recordField("decimal"),
  ...timeFields,
};
export const productFields = {
  ...idFields,
  name: recordField("string"),
  description: recordField("string", true),
  sku: recordField("string", true),
  unitPrice: recordField("decimal"),
  currency: recordField("string"),
  isActive: recordField("boolean"),
  ...timeFields,
};
export const serviceFields = {
  ...idFields,
  name: recordField("string"),
  description: recordField("string", true),
  unitPrice: recordField("decimal"),
  unit: recordField("string", true),
  isActive: recordField("boolean"),
  ...timeFields,
};
export const employeeFields = {
  ...idFields,
  firstName: recordField("string"),
  lastName: recordField("string"),
  email: recordField("string", true),
  phone: recordField("string", true),
  position: recordField("string", true),
  isActive: recordField("boolean"),
  ...timeFields,
};

// ---------------------------------------------------------------------------------------------
// Responses: what GET returns. Events carry the same objects without relations.

const timestamp = z.string().openapi({ format: "date-time" });
const nullableTimestamp = z.string().nullable().openapi({ format: "date-time" });

/** How a response carries a field: ids and decimals as JSON strings and numbers, times as ISO 8601 text. */
function fieldView(field: RecordField): z.ZodType {
  if (field.type === "datetime") return field.nullable ? nullableTimestamp : timestamp;
  const view =
    field.type === "boolean" ? z.boolean() : field.type === "decimal" ? z.number() : field.type === "enum" ? z.enum(field.enumValues as [string, ...string[]]) : z.string();
  return field.nullable ? view.nullable() : view;
}

/** A record's response fields, one per field in order; `documented` replaces a field's view to describe it. */
function recordView(fields: Readonly<Record<string, RecordField>>, documented: Readonly<Record<string, z.ZodType>> = {}): Record<string, z.ZodType> {
  // Custom values (extensions §E4) follow the built-in fields, as the serializer writes them.
  return { ...Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, documented[name] ?? fieldView(field)])), customFields: customFieldsSchema };
}

const recordItemView = z.object({ description: z.string(), quantity: z.number(), unitPrice: z.number() });

/** An invoice's or quote's fields, with its line items right after the total (where the serializer writes them). */
function documentView(fields: Readonly<Record<string, RecordField>>, numberExample: string): Record<string, z.ZodType> {
  const view = recordView(fields, {
    number: z.string().openapi({ description: "Read-only, per business in sequence", example: numberExample }),
    totalAmount: z.number().openapi({ description: "Read-only: sum of quantity × unitPrice, rounded half-up to 2 decimals" }),
  });
  return Object.fromEntries(
    Object.entries(view).flatMap(([name, type]) =>
      name === "totalAmount"
        ? [
            ["items", z.array(recordItemView)],
            [name, type],
          ]
        : [[name, type]],
    ),
  );
}

export const contactSchema = z.object(recordView(contactFields)).openapi("Contact");

const clientBaseSchema = z.object(recordView(clientFields));

export const invoiceSchema = z
  .object({ ...documentView(invoiceFields, "INV-000001"), client: clientBaseSchema.optional().openapi({ description: "Only with include=client" }) })
  .openapi("Invoice");

export const quoteSchema = z
  .object({ ...documentView(quoteFields, "QUO-000001"), client: clientBaseSchema.optional().openapi({ description: "Only with include=client" }) })
  .openapi("Quote");

const capNote = `At most ${DEFAULT_INCLUDE_MAX_PER_RELATION} records, the newest first.`;
const truncatedFlag = (relation: string, entity: RecordEntity) =>
  z
    .literal(true)
    .optional()
    .openapi({
      description:
        `Present, and true, only when the client has more ${relation} than the include cap (${DEFAULT_INCLUDE_MAX_PER_RELATION}): ` +
        `${relation} then holds the newest ones; list them all with GET /api/v1/${entity}?where=clientId:<id>.`,
    });

export const clientSchema = z
  .object({
    ...recordView(clientFields),
    contacts: z
      .array(contactSchema)
      .optional()
      .openapi({ description: `Default relation; remove with include=-contacts. ${capNote}` }),
    [truncatedRelationField("contacts")]: truncatedFlag("contacts", "contact"),
    invoices: z
      .array(invoiceSchema.omit({ client: true }))
      .optional()
      .openapi({ description: `Only with include=invoices. ${capNote}` }),
    [truncatedRelationField("invoices")]: truncatedFlag("invoices", "invoice"),
    quotes: z
      .array(quoteSchema.omit({ client: true }))
      .optional()
      .openapi({ description: `Only with include=quotes. ${capNote}` }),
    [truncatedRelationField("quotes")]: truncatedFlag("quotes", "quote"),
  })
  .openapi("Client");

export const contactWithClientSchema = contactSchema
  .extend({ client: clientBaseSchema.optional().openapi({ description: "Only with include=client" }) })
  .openapi("ContactWithRelations");

export const productSchema = z.object(recordView(productFields)).openapi("Product");

export const serviceSchema = z.object(recordView(serviceFields)).openapi("Service");

export const employeeSchema = z.object(recordView(employeeFields)).openapi("Employee");
