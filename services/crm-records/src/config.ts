import { auditConfigFields } from "@crm/audit";
import { env, parseEnv, z } from "@crm/config";
import { DEFAULT_INCLUDE_MAX_PER_RELATION, EVENTS_RETENTION_DAYS_DEFAULT, TRASH_RETENTION_DAYS_DEFAULT } from "@crm/contracts";
import { retentionConfigFields, serviceConfigFields } from "@crm/service-kit";
import type { RecordDevices } from "./application/record.service";

/** Everything the crm-records service reads from the environment (decisions §1). */
export const configSchema = z
  .object({
    ...serviceConfigFields,
    ...retentionConfigFields,
    ...auditConfigFields,
    PORT: env.port(4002),
    /** How often the outbox relay looks for unsent events when no write has kicked it. */
    OUTBOX_POLL_INTERVAL_MS: env.int(1000, 10),
    /** Most related records one parent carries per to-many relation in a response (newest first). */
    INCLUDE_MAX_PER_RELATION: env.int(DEFAULT_INCLUDE_MAX_PER_RELATION, 1),
    /**
     * Events stay readable in the change feed this many days after they were published (extensions §E6);
     * their outbox rows, the feed's history, are deleted then.
     */
    EVENTS_RETENTION_DAYS: env.int(EVENTS_RETENTION_DAYS_DEFAULT, 1),
    /** Records stay in the trash this many days after their delete, then are purged for good (extensions §E5). */
    TRASH_RETENTION_DAYS: env.int(TRASH_RETENTION_DAYS_DEFAULT, 1),
    /** Replaced by EVENTS_RETENTION_DAYS (the outbox is now the change feed's history). Refused when set. */
    OUTBOX_RETENTION_MS: z.string().optional(),
    /** Tuning devices (docs/performance.md), each on by default; `false` turns one off (to measure it, or to rule it out). */
    /** D13: lists as SQL on the driver; off: Prisma's findMany and count. */
    RECORDS_LIST_SQL: env.bool(true),
    /** D14: a record without line items created by one prepared statement; off: a transaction, as for invoices. */
    RECORDS_ONE_STATEMENT_CREATES: env.bool(true),
    /** D16: unfiltered totals from the per-business count slots; off: the business's rows counted. */
    RECORDS_COUNT_SLOTS: env.bool(true),
    /** D35: range filters on custom fields read the sort values' index; off: they cast every record's value. */
    RECORDS_CUSTOM_RANGES: env.bool(true),
    /** D36: the total of a list filtered by one `eq` on a custom field counted from its sort values; off: from the records. */
    RECORDS_CUSTOM_COUNTS: env.bool(true),
    /**
     * D34: lists and one-statement creates start from the custom field definitions kept in the process
     * and confirm them in their own statement; off: each reads the definitions' version first.
     */
    RECORDS_KEPT_DEFINITIONS: env.bool(true),
  })
  .superRefine((config, ctx) => {
    if (config.OUTBOX_RETENTION_MS !== undefined) {
      ctx.addIssue({ code: "custom", path: ["OUTBOX_RETENTION_MS"], message: "replaced by EVENTS_RETENTION_DAYS: published events are kept that many days, for the change feed" });
    }
  });

export type RecordsConfig = z.infer<typeof configSchema>;

/** The devices as RecordService takes them. */
export function recordDevicesOf(config: RecordsConfig): RecordDevices {
  return {
    listSql: config.RECORDS_LIST_SQL,
    oneStatementCreates: config.RECORDS_ONE_STATEMENT_CREATES,
    countSlots: config.RECORDS_COUNT_SLOTS,
    customRanges: config.RECORDS_CUSTOM_RANGES,
    customCounts: config.RECORDS_CUSTOM_COUNTS,
    keptDefinitions: config.RECORDS_KEPT_DEFINITIONS,
  };
}

export function loadConfig(source: NodeJS.ProcessEnv = process.env): Readonly<RecordsConfig> {
  return parseEnv(configSchema, source);
}
