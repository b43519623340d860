// Request schemas of the CRM-records context (interface §2, §4; decisions §2, §8): what a create or
// update body may hold, and the limits it must keep. crm-records validates bodies with these.
import { customFieldsSchema } from "./custom-fields";
import { z } from "./zod";

/** The business's own fields (extensions §E4): checked by crm-records against its definitions, not here. */
const customFields = customFieldsSchema.optional();

export const contactTypes = ["EMAIL", "PHONE", "MOBILE", "WEBSITE", "OTHER"] as const;
export const invoiceStatuses = ["DRAFT", "SENT", "PAID", "OVERDUE", "VOID"] as const;
export const quoteStatuses = ["DRAFT", "SENT", "ACCEPTED", "DECLINED", "EXPIRED"] as const;

/** Fields no body may set: the server owns them (decisions §8). */
/** Extensions §E5: which records a read sees (`deleted=`): live ones (the default), trashed ones, or both. */
export const deletedModes = ["exclude", "include", "only"] as const;
export type DeletedMode = (typeof deletedModes)[number];
/** TRASH_RETENTION_DAYS' default: how long a deleted record can be restored before it is purged. */
export const TRASH_RETENTION_DAYS_DEFAULT = 30;

export const readOnlyRecordFields = ["id", "businessId", "number", "totalAmount", "createdAt", "updatedAt", "deletedAt"] as const;

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
    customFields,
  })
  .strict()
  .openapi("ClientCreate", { example: recordBodyExamples.client.create });

export const contactCreateSchema = z
  .object({
    clientId: uuidRef("A client of the caller's business"),
    type: z.enum(contactTypes),
    value: text(RECORD_LIMITS.contactValue),
    isPrimary: z.boolean().optional().openapi({ description: "Default false" }),
    customFields,
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
      customFields,
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
    customFields,
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
    customFields,
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
    customFields,
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
