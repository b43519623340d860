// Retention of the outbox (issue 16 item 10): published rows go EVENTS_RETENTION_DAYS after sentAt, in
// bounded batches; unsent rows never; two runners at once delete each row once.
import { uuidv7 } from "@crm/contracts";
import { startRetention } from "@crm/service-kit";
import { errorCollectingLogger, testInfra } from "@crm/testing";
import { outboxRetentionRule } from "../src/persistence/outbox-retention";
import { sharedHarness, type Harness, type Mode } from "./harness";

const DAY = 24 * 3_600_000;
const WEEK = 7 * DAY;
const modes: Mode[] = testInfra.databaseUrl ? ["pglite", "postgres"] : ["pglite"];

async function seed(h: Harness, count: number, sentAgoMs: number | null): Promise<string[]> {
  const now = Date.now();
  const rows = Array.from({ length: count }, () => ({
    id: uuidv7(),
    topic: "crm.records.v1",
    key: uuidv7(),
    payload: { type: "client.created", data: { firstName: "x".repeat(100) } },
    createdAt: new Date(now - (sentAgoMs ?? 0) - 1000),
    sentAt: sentAgoMs === null ? null : new Date(now - sentAgoMs),
  }));
  await h.prisma.outboxEvent.createMany({ data: rows });
  return rows.map((r) => r.id);
}

describe.each(modes)("outbox retention on %s", (mode) => {
  jest.setTimeout(60_000);
  const h = sharedHarness(mode, {}, 180_000);

  it("deletes rows sent longer ago than the window, keeps newer, unsent and dead-lettered ones", async () => {
    const old = await seed(h, 7, WEEK + 60_000);
    const recent = await seed(h, 3, WEEK - 60_000);
    const unsent = await seed(h, 2, null);
    // A row the bus refused for good stays too, for whoever inspects or replays it.
    await h.prisma.outboxEvent.updateMany({ where: { id: unsent[0] }, data: { deadLetteredAt: new Date(Date.now() - 2 * WEEK), deadLetterError: "too large" } });
    const { logger, errors } = errorCollectingLogger("crm-records");
    const retention = startRetention({ rules: [outboxRetentionRule(h.prisma, WEEK)], intervalMs: 3_600_000, batchSize: 3, logger });
    try {
      expect(await retention.runNow()).toEqual({ "outbox events": 7 });
      const left = await h.prisma.outboxEvent.findMany({ where: { id: { in: [...old, ...recent, ...unsent] } }, select: { id: true } });
      expect(left.map((r) => r.id).sort()).toEqual([...recent, ...unsent].sort());
      expect(await retention.runNow()).toEqual({ "outbox events": 0 });
      expect(errors).toEqual([]);
    } finally {
      await retention.stop();
    }
  });

  it("raises each business's feed horizon to the highest position it deleted (a cursor below it: 410000)", async () => {
    const business = uuidv7();
    const other = uuidv7();
    const row = (key: string, feedPosition: bigint, sentAgoMs: number) => ({
      id: uuidv7(),
      topic: "crm.records.v1",
      key,
      payload: { type: "client.created", data: {} },
      sentAt: new Date(Date.now() - sentAgoMs),
      feedPosition,
    });
    await h.prisma.outboxEvent.createMany({
      data: [row(business, 9_000_001n, 2 * WEEK), row(business, 9_000_003n, 2 * WEEK), row(business, 9_000_005n, DAY), row(other, 9_000_002n, DAY)],
    });
    const { logger } = errorCollectingLogger("crm-records");
    const retention = startRetention({ rules: [outboxRetentionRule(h.prisma, WEEK)], intervalMs: 3_600_000, batchSize: 1_000, logger });
    try {
      await retention.runNow();
      expect(await h.prisma.feedHorizon.findUnique({ where: { businessId: business } })).toEqual({ businessId: business, position: 9_000_003n });
      expect(await h.prisma.feedHorizon.findUnique({ where: { businessId: other } })).toBeNull();
    } finally {
      await retention.stop();
    }
  });

  if (mode === "postgres") {
    it("with two runners at once, deletes each row once without errors", async () => {
      await seed(h, 2000, 2 * WEEK);
      const { logger, errors } = errorCollectingLogger("crm-records");
      const runners = [0, 1].map(() => startRetention({ rules: [outboxRetentionRule(h.prisma, WEEK)], intervalMs: 3_600_000, batchSize: 50, logger }));
      try {
        const results = await Promise.all(runners.map((r) => r.runNow()));
        expect(results.reduce((sum, r) => sum + r["outbox events"]!, 0)).toBe(2000);
        expect(await h.prisma.outboxEvent.count({ where: { sentAt: { lt: new Date(Date.now() - WEEK) } } })).toBe(0);
        expect(errors).toEqual([]);
      } finally {
        await Promise.all(runners.map((r) => r.stop()));
      }
    });
  }
});
