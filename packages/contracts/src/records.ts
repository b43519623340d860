// The CRM-records entities, each declared once (interface §2; decisions §2): permission resource, request
// and response schemas (record-requests.ts, record-responses.ts), fields, relations and client reference.
// crm-records validates request bodies with these; its routes (routes/records.routes.ts) document them.
import type { z } from "./zod";
import type { RecordEntity } from "./events";
import type { RecordField } from "./record-fields";
import {
  clientCreateSchema,
  clientUpdateSchema,
  contactCreateSchema,
  contactUpdateSchema,
  employeeCreateSchema,
  employeeUpdateSchema,
  invoiceCreateSchema,
  invoiceUpdateSchema,
  productCreateSchema,
  productUpdateSchema,
  quoteCreateSchema,
  quoteUpdateSchema,
  serviceCreateSchema,
  serviceUpdateSchema,
} from "./record-requests";
import {
  clientFields,
  clientSchema,
  contactFields,
  contactWithClientSchema,
  employeeFields,
  employeeSchema,
  invoiceFields,
  invoiceSchema,
  productFields,
  productSchema,
  quoteFields,
  quoteSchema,
  serviceFields,
  serviceSchema,
} from "./record-responses";

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
