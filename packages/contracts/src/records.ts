// Request and response schemas of the CRM-records context (interface §2, §4; decisions §2, §3, §8).
// crm-records validates request bodies with these; its routes (routes/records.routes.ts) document them.
import { z } from "./zod";
import type { RecordEntity } from "./events";
import { enumField, recordField, type RecordField } from "./record-fields";

export const contactTypes = ["EMAIL", "PHONE", "MOBILE", "WEBSITE", "OTHER"] as const;
export const invoiceStatuses = ["DRAFT", "SENT", "PAID", "OVERDUE", "VOID"] as const;
export const quoteStatuses = ["DRAFT", "SENT", "ACCEPTED", "DECLINED", "EXPIRED"] as const;

/** Fields no body may set: the server owns them (decisions §8). */
export const readOnlyRecordFields = ["id", "businessId", "number", "totalAmount", "createdAt", "updatedAt"] as const;

/** Most decimal places an item quantity, unit price or product price may carry. */
export const MONEY_MAX_DECIMALS = 4;
/** Amounts are stored as NUMERIC(15,4); anything this large is also beyond exact JSON numbers. */
export const MONEY_UPPER_BOUND = 100_000_000_000;

/**
 * Write-time limits (400001 beyond them, naming the field). They bound what one record, and so one
 * event on the bus, can weigh: the largest invoice they allow (every text at its limit, in characters
 * JSON must escape as `\u00XX`, 6 bytes each) encodes to under 400 KiB, far below Kafka's default
 * 1 MiB message limit; ordinary text weighs a sixth of that. Tested in crm-records' limits test.
 */
/** Most records one `POST /{entity}/batch` creates (extensions §E2.2). */
export const RECORD_BATCH_MAX_ITEMS = 100;

export const RECORD_LIMITS = {
  /** Line items of one invoice or quote (Stripe allows 250 lines per invoice too). */
  itemsPerDocument: 250,
  itemDescription: 200,
  /** firstName, lastName, companyName, position, product and service names. */
  name: 200,
  email: 320,
  phone: 50,
  /** notes of clients, invoices and quotes; descriptions of products and services. */
  longText: 10_000,
  contactValue: 500,
  sku: 100,
  unit: 50,
} as const;

/**
 * Decimal places of a JSON number as the client wrote it. JSON.parse gives the nearest double, and
 * the shortest text that reads back as that double (`String(n)`) is what was written for every
 * number of at most 15 significant digits, which the bounds above guarantee.
 */
export function decimalPlaces(value: number): number {
  const match = /^-?\d+(?:\.(\d+))?(?:e([+-]\d+))?$/i.exec(String(value));
  if (!match) return Number.POSITIVE_INFINITY;
  return Math.max(0, (match[1]?.length ?? 0) - Number(match[2] ?? 0));
}

function amount(options: { positive: boolean; description: string }) {
  const base = z.number();
  return (options.positive ? base.positive() : base.min(0))
    .lt(MONEY_UPPER_BOUND)
    .refine((n) => decimalPlaces(n) <= MONEY_MAX_DECIMALS, { message: `At most ${MONEY_MAX_DECIMALS} decimal places` })
    .openapi({ description: options.description, example: options.positive ? 2 : 49.99 });
}

const ISO_DATE = z.iso.date();
const ISO_DATE_TIME = z.iso.datetime({ offset: true });
/** `YYYY-MM-DD` (midnight UTC) or a full ISO 8601 date-time with `Z` or an offset. */
const isoDate = z
  .string()
  .refine((v) => ISO_DATE.safeParse(v).success || ISO_DATE_TIME.safeParse(v).success, {
    message: "Expected an ISO 8601 date (YYYY-MM-DD) or date-time",
  })
  .openapi({ description: "ISO 8601 date (YYYY-MM-DD, midnight UTC) or date-time", example: "2025-01-31" });

const currency = z
  .string()
  .regex(/^[A-Z]{3}$/, { message: "Expected an ISO 4217 currency code (3 upper-case letters)" })
  .openapi({ description: "ISO 4217 code; default USD", example: "EUR" });

const uuidRef = (description: string) => z.string().openapi({ description, example: "01939d5e-8c2a-7b3e-9f1a-2c4d6e8f0a1b" });

const text = (max: number) => z.string().min(1).max(max);
const optionalText = (max: number) => z.string().max(max).nullable().optional();
const email = z.email({ message: "Invalid email address" }).max(RECORD_LIMITS.email).openapi({ example: "ada@example.com" });

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
// Writable fields per entity (decisions §2). Defaults are the database's (isActive true, status
// DRAFT, currency USD, unitPrice 0, isPrimary false), so update schemas are exact partials.

export const recordItemSchema = z
  .object({
    description: text(RECORD_LIMITS.itemDescription),
    quantity: amount({ positive: true, description: "Greater than 0, at most 4 decimal places" }),
    unitPrice: amount({ positive: false, description: "0 or more, at most 4 decimal places" }),
  })
  .strict()
  .openapi("RecordItem");
export type RecordItemInput = z.infer<typeof recordItemSchema>;

const items = z.array(recordItemSchema).min(1, { message: "At least one item is required" }).max(RECORD_LIMITS.itemsPerDocument);

/**
 * A request body example per entity, shown in the OpenAPI document (create, update, and a batch of
 * creates); each is checked against its schema by the gateway's OpenAPI test.
 */
const CLIENT_ID_EXAMPLE = "01939d5e-8c2a-7b3e-9f1a-2c4d6e8f0a1b";
export const recordBodyExamples = {
  client: {
    create: { firstName: "Grace", lastName: "Hopper", email: "grace@example.com", phone: "+1 202 555 0143", companyName: "Eckert-Mauchly" },
    update: { notes: "Prefers email", isActive: true },
  },
  contact: { create: { clientId: CLIENT_ID_EXAMPLE, type: "EMAIL", value: "billing@example.com", isPrimary: true }, update: { value: "accounts@example.com" } },
  invoice: {
    create: { clientId: CLIENT_ID_EXAMPLE, items: [{ description: "Consulting", quantity: 3, unitPrice: 120 }], currency: "EUR", dueDate: "2026-03-31" },
    update: { status: "SENT" },
  },
  quote: {
    create: { clientId: CLIENT_ID_EXAMPLE, items: [{ description: "Design sprint", quantity: 1, unitPrice: 4800 }], validUntil: "2026-04-30" },
    update: { status: "ACCEPTED" },
  },
  product: { create: { name: "Widget", sku: "W-100", unitPrice: 19.99, currency: "EUR" }, update: { unitPrice: 21.5 } },
  service: { create: { name: "Support hour", unitPrice: 90, unit: "hour" }, update: { description: "Remote support, business hours" } },
  employee: { create: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.com", position: "Analyst" }, update: { position: "Lead analyst" } },
} as const;

export const clientCreateSchema = z
  .object({
    firstName: text(RECORD_LIMITS.name),
    lastName: text(RECORD_LIMITS.name),
    email: email.nullable().optional(),
    phone: optionalText(RECORD_LIMITS.phone),
    companyName: optionalText(RECORD_LIMITS.name),
    notes: optionalText(RECORD_LIMITS.longText),
    isActive: z.boolean().optional().openapi({ description: "Default true" }),
  })
  .strict()
  .openapi("ClientCreate", { example: recordBodyExamples.client.create });

export const contactCreateSchema = z
  .object({
    clientId: uuidRef("A client of the caller's business"),
    type: z.enum(contactTypes),
    value: text(RECORD_LIMITS.contactValue),
    isPrimary: z.boolean().optional().openapi({ description: "Default false" }),
  })
  .strict()
  .openapi("ContactCreate", { example: recordBodyExamples.contact.create });

/** An invoice's or quote's create body: its client, line items, status and currency, its own dates, notes. */
function documentCreateSchema<Dates extends z.ZodRawShape>(statuses: readonly [string, ...string[]], dates: Dates, name: string, example: object) {
  return z
    .object({
      clientId: uuidRef("A client of the caller's business"),
      items,
      status: z.enum(statuses).optional().openapi({ description: "Default DRAFT; may change freely" }),
      currency: currency.optional(),
      ...dates,
      notes: optionalText(RECORD_LIMITS.longText),
    })
    .strict()
    .openapi(name, { example });
}

export const invoiceCreateSchema = documentCreateSchema(
  invoiceStatuses,
  { issueDate: isoDate.nullable().optional(), dueDate: isoDate.nullable().optional() },
  "InvoiceCreate",
  recordBodyExamples.invoice.create,
);
export const quoteCreateSchema = documentCreateSchema(quoteStatuses, { validUntil: isoDate.nullable().optional() }, "QuoteCreate", recordBodyExamples.quote.create);

export const productCreateSchema = z
  .object({
    name: text(RECORD_LIMITS.name),
    description: optionalText(RECORD_LIMITS.longText),
    sku: optionalText(RECORD_LIMITS.sku),
    unitPrice: amount({ positive: false, description: "Default 0; at most 4 decimal places" }).optional(),
    currency: currency.optional(),
    isActive: z.boolean().optional().openapi({ description: "Default true" }),
  })
  .strict()
  .openapi("ProductCreate", { example: recordBodyExamples.product.create });

export const serviceCreateSchema = z
  .object({
    name: text(RECORD_LIMITS.name),
    description: optionalText(RECORD_LIMITS.longText),
    unitPrice: amount({ positive: false, description: "Default 0; at most 4 decimal places" }).optional(),
    unit: optionalText(RECORD_LIMITS.unit).openapi({ example: "hour" }),
    isActive: z.boolean().optional().openapi({ description: "Default true" }),
  })
  .strict()
  .openapi("ServiceCreate", { example: recordBodyExamples.service.create });

export const employeeCreateSchema = z
  .object({
    firstName: text(RECORD_LIMITS.name),
    lastName: text(RECORD_LIMITS.name),
    email: email.nullable().optional(),
    phone: optionalText(RECORD_LIMITS.phone),
    position: optionalText(RECORD_LIMITS.name),
    isActive: z.boolean().optional().openapi({ description: "Default true" }),
  })
  .strict()
  .openapi("EmployeeCreate", { example: recordBodyExamples.employee.create });

export const clientUpdateSchema = clientCreateSchema.partial().strict().openapi("ClientUpdate", { example: recordBodyExamples.client.update });
export const contactUpdateSchema = contactCreateSchema.partial().strict().openapi("ContactUpdate", { example: recordBodyExamples.contact.update });
export const invoiceUpdateSchema = invoiceCreateSchema.partial().strict().openapi("InvoiceUpdate", { example: recordBodyExamples.invoice.update });
export const quoteUpdateSchema = quoteCreateSchema.partial().strict().openapi("QuoteUpdate", { example: recordBodyExamples.quote.update });
export const productUpdateSchema = productCreateSchema.partial().strict().openapi("ProductUpdate", { example: recordBodyExamples.product.update });
export const serviceUpdateSchema = serviceCreateSchema.partial().strict().openapi("ServiceUpdate", { example: recordBodyExamples.service.update });
export const employeeUpdateSchema = employeeCreateSchema.partial().strict().openapi("EmployeeUpdate", { example: recordBodyExamples.employee.update });

export type ClientCreate = z.infer<typeof clientCreateSchema>;
export type ContactCreate = z.infer<typeof contactCreateSchema>;
export type InvoiceCreate = z.infer<typeof invoiceCreateSchema>;
export type QuoteCreate = z.infer<typeof quoteCreateSchema>;
export type ProductCreate = z.infer<typeof productCreateSchema>;
export type ServiceCreate = z.infer<typeof serviceCreateSchema>;
export type EmployeeCreate = z.infer<typeof employeeCreateSchema>;

// ---------------------------------------------------------------------------------------------
// Fields: every scalar field of each entity's record, in response order (the columns of its Prisma
// model, in the same order). The response schemas below, the contracts' `fields` and so crm-records'
// columns, the query language's allow-lists and webhook filters all derive from these.

const idFields = { id: recordField("uuid"), businessId: recordField("uuid") };
const timeFields = { createdAt: recordField("datetime"), updatedAt: recordField("datetime") };

const clientFields = {
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
const contactFields = { ...idFields, clientId: recordField("uuid"), type: enumField(contactTypes), value: recordField("string"), isPrimary: recordField("boolean"), ...timeFields };
const invoiceFields = {
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
const quoteFields = {
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
const productFields = {
  ...idFields,
  name: recordField("string"),
  description: recordField("string", true),
  sku: recordField("string", true),
  unitPrice: recordField("decimal"),
  currency: recordField("string"),
  isActive: recordField("boolean"),
  ...timeFields,
};
const serviceFields = {
  ...idFields,
  name: recordField("string"),
  description: recordField("string", true),
  unitPrice: recordField("decimal"),
  unit: recordField("string", true),
  isActive: recordField("boolean"),
  ...timeFields,
};
const employeeFields = {
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
  return Object.fromEntries(Object.entries(fields).map(([name, field]) => [name, documented[name] ?? fieldView(field)]));
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

// ---------------------------------------------------------------------------------------------
// The entities: each one declared once. crm-records' generic service, the gateway's routes and
// /capabilities, the OpenAPI document, the event catalogue and webhook filters all derive from this.

/** A relation `include` may name. */
export type RecordRelation = {
  /** The entity the relation holds. */
  target: RecordEntity;
  /** Loaded unless removed with `include=-name`. */
  default: boolean;
} & (
  | /** This record's client reference points to the target. */ { kind: "one" }
  | {
      /** The target's client reference points here. */
      kind: "many";
      /**
       * What deleting this record does to the records pointing here: `cascade` deletes them first,
       * each with its own event; `restrict` refuses the delete while any exists (409003).
       */
      onDelete: "cascade" | "restrict";
    }
);

export interface RecordContract {
  /** Permission resource: `clients` in `clients.read` (permissions.ts derives `recordResources` from these). */
  resource: string;
  create: z.ZodType;
  update: z.ZodType;
  /** What GET returns, relations included when asked for. */
  view: z.ZodType;
  /** Every scalar field of the record, in response order: what `where`, `orderBy` and webhook filters name. */
  fields: Readonly<Record<string, RecordField>>;
  relations: Readonly<Record<string, RecordRelation>>;
  /** Body field naming a client of the caller's business (an unknown one is 400001 at this path). */
  clientReference?: "clientId";
}

const hasMany = (target: RecordEntity, onDelete: "cascade" | "restrict", isDefault = false) => ({ target, kind: "many", default: isDefault, onDelete }) as const;
/** The relation and reference of every record that belongs to a client. */
const ofClient = { relations: { client: { target: "client", kind: "one", default: false } }, clientReference: "clientId" } as const;
/** Per entity: permission resource, request and response schemas, fields, relations and client reference. */
export const recordContracts = {
  client: {
    resource: "clients",
    create: clientCreateSchema,
    update: clientUpdateSchema,
    view: clientSchema,
    fields: clientFields,
    // Contacts belong to the client; invoices and quotes are business documents that must not vanish.
    relations: { contacts: hasMany("contact", "cascade", true), invoices: hasMany("invoice", "restrict"), quotes: hasMany("quote", "restrict") },
  },
  contact: {
    resource: "contacts",
    create: contactCreateSchema,
    update: contactUpdateSchema,
    view: contactWithClientSchema,
    fields: contactFields,
    ...ofClient,
  },
  invoice: {
    resource: "invoices",
    create: invoiceCreateSchema,
    update: invoiceUpdateSchema,
    view: invoiceSchema,
    fields: invoiceFields,
    ...ofClient,
  },
  quote: {
    resource: "quotes",
    create: quoteCreateSchema,
    update: quoteUpdateSchema,
    view: quoteSchema,
    fields: quoteFields,
    ...ofClient,
  },
  product: {
    resource: "products",
    create: productCreateSchema,
    update: productUpdateSchema,
    view: productSchema,
    fields: productFields,
    relations: {},
  },
  service: {
    resource: "services",
    create: serviceCreateSchema,
    update: serviceUpdateSchema,
    view: serviceSchema,
    fields: serviceFields,
    relations: {},
  },
  employee: {
    resource: "employees",
    create: employeeCreateSchema,
    update: employeeUpdateSchema,
    view: employeeSchema,
    fields: employeeFields,
    relations: {},
  },
} as const satisfies Record<RecordEntity, RecordContract>;

function perEntity<T>(pick: (contract: RecordContract) => T): Readonly<Record<RecordEntity, T>> {
  return Object.fromEntries(Object.entries(recordContracts).map(([entity, contract]) => [entity, pick(contract)])) as Record<RecordEntity, T>;
}

export type RecordResource = (typeof recordContracts)[RecordEntity]["resource"];

/** Permission resource of each entity (`clients.read`, ...). */
export const recordResourceOf = perEntity((contract) => contract.resource) as { readonly [E in RecordEntity]: (typeof recordContracts)[E]["resource"] };

/**
 * The scalar fields of each entity's record as events carry it, typed for the `where` language:
 * what a webhook filter (extensions §E1.5) may name and how it compares them. The same fields a
 * list's `where` accepts: crm-records' columns are these (ids being PostgreSQL uuid columns there).
 */
export const recordFields = perEntity((contract) => contract.fields);
