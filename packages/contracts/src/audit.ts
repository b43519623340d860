// The audit log's shapes, its closed catalogue of actions and its bounds (extensions §E7).
import { recordEntities } from "./events";
import { z } from "./zod";

export const AUDIT_PER_PAGE_MAX = 100;
export const AUDIT_PER_PAGE_DEFAULT = 10;
/** AUDIT_RETENTION_DAYS' default: how long entries are kept. */
export const AUDIT_RETENTION_DAYS_DEFAULT = 365;
/** What stands in an entry for a password, key material or a webhook secret. */
export const AUDIT_REDACTED = "[REDACTED]";

export const auditActorTypes = ["user", "apiKey", "anonymous", "system"] as const;
export type AuditActorType = (typeof auditActorTypes)[number];

/** A record's audited changes: the three of interface and decisions, and trash's two (extensions §E5). */
export const recordAuditVerbs = ["created", "updated", "deleted", "restored", "purged"] as const;

/**
 * Every action an entry can name, grouped by its prefix (the part before the dot): `action=client.*`
 * stands for its group.
 */
export const auditActionGroups = {
  ...Object.fromEntries(recordEntities.map((entity) => [entity, recordAuditVerbs])),
  user: ["created", "updated", "deleted"],
  apiKey: ["created", "updated", "revoked", "rolled"],
  // A webhook's own changes; its deliveries (tests, retries, recoveries) are not what §E7 audits.
  webhook: ["created", "updated", "deleted", "secretRotated"],
  auth: ["signedIn", "signInFailed", "signedOut", "refreshReused"],
  // Custom field definitions (§E4), target {type: "field", id: "<entity>.<key>"}: archiving and
  // un-archiving are updates, a permanent delete is `field.deleted` (crm-records' custom-field-audit.ts).
  field: ["created", "updated", "deleted"],
} as Readonly<Record<string, readonly string[]>>;

export const auditActions: readonly string[] = Object.entries(auditActionGroups).flatMap(([group, verbs]) => verbs.map((verb) => `${group}.${verb}`));

export const auditActorSchema = z
  .object({
    type: z.enum(auditActorTypes),
    id: z.string().nullable().openapi({ description: "The user's or API key's id; null for anonymous and system" }),
    label: z.string().nullable().openapi({ description: "The user's email or the API key's name when the change was made; an attempted email on a failed sign-in" }),
  })
  .openapi("AuditActor");

export const auditEntrySchema = z
  .object({
    id: z.string(),
    occurredAt: z.string().openapi({ description: "ISO 8601, millisecond precision: when the change committed" }),
    action: z.string().openapi({ example: "client.updated" }),
    actor: auditActorSchema,
    target: z.object({ type: z.string().openapi({ example: "client" }), id: z.string().nullable() }).openapi("AuditTarget"),
    changes: z
      .record(z.string(), z.unknown())
      .nullable()
      .openapi({
        description: `Updates: {field: {from, to}} for the fields previousAttributes names; creates: the record; otherwise null. Passwords, key material and secrets are "${AUDIT_REDACTED}"`,
      }),
    requestId: z.string().nullable(),
    ip: z.string().nullable().openapi({ description: "The client's address as the gateway saw it (IPv4-mapped IPv6 as IPv4)" }),
    userAgent: z.string().nullable(),
  })
  .openapi("AuditEntry");
export type AuditEntryView = z.infer<typeof auditEntrySchema>;

export const auditListMetaSchema = z
  .object({
    perPage: z.number().int(),
    nextCursor: z.string().nullable().openapi({ description: "The next page's cursor; null when nothing follows" }),
  })
  .openapi("AuditListMeta");
