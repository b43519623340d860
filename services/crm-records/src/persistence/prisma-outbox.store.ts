// The relay's view of the outbox table: pending rows in sequence order, marking them sent or
// dead-lettered, and a lease row so only one relay per database publishes at a time (events stay in
// order per business).
import type { EventEnvelope } from "@crm/contracts";
import type { OutboxRow, OutboxStore } from "@crm/event-bus";
import type { PrismaClient } from "./prisma";

const LEASE_NAME = "records-outbox-relay";

export class PrismaOutboxStore implements OutboxStore {
  constructor(private readonly prisma: PrismaClient) {}

  async pending(limit: number): Promise<OutboxRow[]> {
    const rows = await this.prisma.outboxEvent.findMany({ where: { sentAt: null, deadLetteredAt: null }, orderBy: { sequence: "asc" }, take: limit });
    return rows.map((row) => ({
      sequence: row.sequence,
      topic: row.topic,
      key: row.key,
      payload: row.payload as unknown as EventEnvelope,
      ...(row.traceparent ? { traceparent: row.traceparent } : {}),
    }));
  }

  async markSent(sequences: readonly bigint[]): Promise<void> {
    if (sequences.length === 0) return;
    await this.prisma.outboxEvent.updateMany({ where: { sequence: { in: [...sequences] }, sentAt: null }, data: { sentAt: new Date() } });
  }

  async deadLetter(sequence: bigint, reason: string): Promise<void> {
    await this.prisma.outboxEvent.updateMany({
      where: { sequence, sentAt: null, deadLetteredAt: null },
      data: { deadLetteredAt: new Date(), deadLetterError: reason },
    });
  }

  /** Takes the lease when free or expired, renews it when already held; the database clock decides expiry. */
  async acquireLease(holder: string, ttlMs: number): Promise<boolean> {
    const rows = await this.prisma.$queryRaw<Array<{ holder: string }>>`
      INSERT INTO "records"."OutboxLease" ("name", "holder", "expiresAt")
      VALUES (${LEASE_NAME}, ${holder}, now() + (${Math.round(ttlMs)}::int * interval '1 millisecond'))
      ON CONFLICT ("name") DO UPDATE SET "holder" = EXCLUDED."holder", "expiresAt" = EXCLUDED."expiresAt"
      WHERE "OutboxLease"."holder" = EXCLUDED."holder" OR "OutboxLease"."expiresAt" < now()
      RETURNING "holder"`;
    return rows.length === 1;
  }

  async releaseLease(holder: string): Promise<void> {
    await this.prisma.$executeRaw`
      UPDATE "records"."OutboxLease" SET "expiresAt" = now() - interval '1 second'
      WHERE "name" = ${LEASE_NAME} AND "holder" = ${holder}`;
  }

  /** Unsent rows (dead-lettered ones excluded) and the age of the oldest, for the outbox metrics. */
  async backlog(): Promise<{ unsent: number; oldestAgeSeconds: number }> {
    const [row] = await this.prisma.$queryRaw<Array<{ unsent: number; oldest_age_s: number | null }>>`
      SELECT count(*)::int AS unsent, extract(epoch FROM now() - min("createdAt"))::float8 AS oldest_age_s
      FROM "records"."OutboxEvent" WHERE "sentAt" IS NULL AND "deadLetteredAt" IS NULL`;
    return { unsent: row?.unsent ?? 0, oldestAgeSeconds: Math.max(0, row?.oldest_age_s ?? 0) };
  }
}
