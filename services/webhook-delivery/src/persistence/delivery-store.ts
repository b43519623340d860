// The delivery tables as every concern of the repository sees them: the records' types, the SQL names and
// the fragments more than one concern's statements share, and the connection pair they run on. The
// concerns: delivery-create.ts (records of events), delivery-claims.ts (who attempts what, when),
// delivery-outcomes.ts (what an attempt did), delivery-api.ts (what the API reads and asks for);
// delivery.repository.ts puts them together.
import type { SqlRunner } from "@crm/database";
import { Prisma, type DeliveryStatus, type PrismaClient } from "../generated/prisma/client";

/**
 * A delivery this process may attempt. `leaseUntil` is the value this process wrote into the row's
 * `leaseUntil` when it claimed it: while it is still there, nobody else has claimed the attempt, so
 * it doubles as the fencing token for every later write about this attempt.
 */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  businessId: string;
  attempt: number;
  leaseUntil: Date;
  /**
   * What to send, as read by the claim statement itself, and when: an attempt that starts soon after
   * its claim sends this instead of reading it again (see AttemptExecutor).
   */
  read?: { at: Date; send: AttemptToSend };
}

/** What an attempt sends, read from the delivery, its webhook (current URL and secret) and its payload. */
export interface AttemptToSend {
  event: string;
  payload: string;
  manualRetry: boolean;
  url: string;
  /** The webhook's signing secret as stored: sealed (see SecretKeyring), opened only to sign. */
  secret: string;
  /** The secret rotated away most recently, sealed, while its grace period runs (else null). */
  previousSecret: string | null;
  webhookActive: boolean;
}

/** What an attempt needs, read at send time (the webhook's current URL and secret). */
export interface StartedAttempt extends ClaimedDelivery, AttemptToSend {}

export interface AttemptRecord {
  responseStatus: number;
  responseBody: string;
  durationMs: number;
  succeeded: boolean;
  status: DeliveryStatus;
  nextRetryAt: Date | null;
}

// Raw SQL names: the models live in the "webhooks" PostgreSQL schema.
export const DELIVERY = Prisma.raw(`"webhooks"."Delivery"`);
export const WEBHOOK = Prisma.raw(`"webhooks"."Webhook"`);
export const PAYLOAD = Prisma.raw(`"webhooks"."Payload"`);
export const DELIVERY_ATTEMPT = Prisma.raw(`"webhooks"."DeliveryAttempt"`);
export const DELIVERY_STATUS = Prisma.raw(`"webhooks"."DeliveryStatus"`);
/**
 * The AttemptToSend columns, for statements over the delivery `d`, its webhook `w` and payload `p`:
 * one list for the claims and startAttempt, so both always read the same thing.
 */
export const SEND_COLUMNS = Prisma.sql`d.event, p.body AS payload, d."manualRetry", w.url, w.secret,
  CASE WHEN w."previousSecretExpiresAt" > now() THEN w."previousSecret" END AS "previousSecret",
  -- Waiting (last touched) before the webhook last became inactive: never sent, even if it is active
  -- again now (extensions §E1.3); a manual retry or a recovery since then has touched it.
  w."isActive" AND (w."deactivatedAt" IS NULL OR d."updatedAt" > w."deactivatedAt") AS "webhookActive"`;
export type ClaimRow = { id: string; webhookId: string; businessId: string; attempt: number } & AttemptToSend;

export function claimsFrom(rows: ClaimRow[], leaseUntil: Date, at: Date): ClaimedDelivery[] {
  return rows.map(({ id, webhookId, businessId, attempt, ...send }) => ({
    id,
    webhookId,
    businessId,
    attempt: Number(attempt),
    leaseUntil,
    read: { at, send },
  }));
}

/**
 * Due and held by nobody: a claimed row keeps its (past) nextRetryAt, and its lease is in leaseUntil.
 * For the claims' WHERE clauses, over the delivery rows unqualified or as `d`.
 */
export const free = (now: Date, d = "") =>
  Prisma.sql`${Prisma.raw(d)}"nextRetryAt" <= ${now}::timestamptz AND (${Prisma.raw(d)}"leaseUntil" IS NULL OR ${Prisma.raw(d)}"leaseUntil" <= ${now}::timestamptz)`;

/**
 * A first attempt (PENDING), written as the first-attempts index's predicate (migration
 * 20261126170000_first_attempts_index_only): ("status", "nextRetryAt") cannot take IS NOT DISTINCT FROM
 * as an index condition, so that partial index is the only one that serves the claims of first attempts,
 * whatever the last ANALYZE saw. With `status = 'PENDING'`, their generic plans read every business's due
 * first attempts through ("status", "nextRetryAt") and sorted them whenever ANALYZE had seen no PENDING
 * row (docs/performance.md D23). status is NOT NULL: the same rows as `=`.
 */
export const FIRST_ATTEMPT = Prisma.sql`status IS NOT DISTINCT FROM 'PENDING'`;

/** The connection pair every concern's statements run on. */
export class DeliveryStore {
  /**
   * `sql` is the database driver under `prisma`: the statements of every attempt (create, claims,
   * start, outcomes) go straight to it, built with Prisma.sql (bound parameters, `$n` text), because
   * Prisma's client runtime cost 11.6% of the delivery CPU profile (docs/performance.md) for
   * statements it only passes through. The rest (API reads and writes) stays on Prisma.
   */
  constructor(
    protected readonly prisma: PrismaClient,
    protected readonly sql: SqlRunner,
  ) {}

  /**
   * `name`: the statement's text is the same on every call (lists travel as array parameters, never
   * as a variable number of placeholders), so each connection prepares it once and PostgreSQL
   * neither parses nor, after a few runs, plans it again (planning alone was 0.4-0.5 ms of a 2-row
   * recordAttempts, docs/performance.md).
   */
  protected async query<T>(statement: Prisma.Sql, name?: string): Promise<T[]> {
    return (await this.sql.query<T>(statement.text, statement.values, name ? { name } : undefined)).rows;
  }
}
