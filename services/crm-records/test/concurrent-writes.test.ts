// A record deleted by another request while an update is under way: never a 500. The update locks
// its row before reading it (so `previousAttributes`, extensions §E1.4, is the state it replaced),
// so a delete arriving between its read and its write waits for it: the update answers 200 with
// its event, then the delete removes the record. A delete committed before the update locked the
// row leaves it 404001 with nothing written. Made deterministic by a query hook that starts the
// delete on another connection just before the update's write runs, and waits until PostgreSQL
// shows that delete waiting for the row lock.
import { describePostgres, waitFor } from "@crm/testing";
import { createApp } from "../src/app";
import type { PrismaClient } from "../src/persistence/prisma";
import request from "supertest";
import { signInternalToken } from "@crm/service-kit";
import { createClient, logger, sharedHarness, principalFor, SECRET } from "./harness";

const NOT_FOUND = { success: false, error: { code: 404001, message: "Resource not found" } };
const item = { description: "Work", quantity: 1, unitPrice: 100 };

describePostgres("update racing a delete (PostgreSQL, real concurrency)", () => {
  const h = sharedHarness("postgres");
  let beforeWrite: (() => Promise<void>) | undefined;
  let raced: ReturnType<typeof createApp>;

  beforeAll(async () => {
    // Every update/upsert through the app's client first runs the pending hook (once).
    const hooked = h.prisma.$extends({
      query: {
        $allModels: {
          async update({ args, query }) {
            const hook = beforeWrite;
            beforeWrite = undefined;
            if (hook) await hook();
            return query(args);
          },
        },
      },
    }) as unknown as PrismaClient;
    raced = createApp({ logger, prisma: hooked, sql: h.db.sql, internalTokenSecret: SECRET, parallelQueries: true });
  });

  it.each([
    ["employee", { firstName: "E", lastName: "One" }, { position: "Lead" }],
    ["product", { name: "P" }, { name: "Q" }],
    ["invoice", "client", { items: [item, item] }],
  ] as const)("%s: a delete arriving after the update read it waits for the update, then removes the record", async (entity, body, patch) => {
    const caller = h.caller();
    const createBody = body === "client" ? { clientId: await createClient(caller), items: [item] } : body;
    const id = (await caller.post(`/${entity}`, createBody).expect(201)).body.data.id as string;
    const delegate = (h.prisma as unknown as Record<string, { delete(args: object): Promise<unknown>; findFirst(args: object): Promise<unknown> }>)[entity]!;
    let deletion: Promise<unknown> | undefined;
    beforeWrite = async () => {
      // Prisma queries start only when awaited or then()-ed.
      deletion = delegate.delete({ where: { id } }).then((r) => r);
      await waitFor(
        async () => {
          const waiting = await h.prisma.$queryRawUnsafe<Array<{ n: number }>>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
          );
          return waiting[0]!.n > 0;
        },
        10_000,
        20,
      );
    };
    const token = signInternalToken({ principal: principalFor(caller.businessId) }, SECRET);
    const res = await request(raced).patch(`/api/v1/${entity}/${id}`).set("x-internal-token", token).send(patch);
    expect(beforeWrite).toBeUndefined();
    expect(res.status).toBe(200);
    await deletion;
    expect(await delegate.findFirst({ where: { id } })).toBeNull();
    const updatedEvents = await h.prisma.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM records."OutboxEvent" WHERE payload->>'type' = $1 AND payload->'data'->>'id' = $2`,
      `${entity}.updated`,
      id,
    );
    expect(updatedEvents[0]!.n).toBe(1);
  });

  it("an update of a record deleted before it locked the row: 404001, nothing written", async () => {
    const caller = h.caller();
    const id = (await caller.post("/employee", { firstName: "E", lastName: "Gone" }).expect(201)).body.data.id as string;
    await caller.delete(`/employee/${id}`).expect(200);
    const token = signInternalToken({ principal: principalFor(caller.businessId) }, SECRET);
    const res = await request(raced).patch(`/api/v1/employee/${id}`).set("x-internal-token", token).send({ position: "Lead" });
    expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    const updatedEvents = await h.prisma.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM records."OutboxEvent" WHERE payload->>'type' = 'employee.updated' AND payload->'data'->>'id' = $1`,
      id,
    );
    expect(updatedEvents[0]!.n).toBe(0);
  });

  it("two concurrent deletes of one record: one 200, one 404001, never a 500", async () => {
    const caller = h.caller();
    for (let i = 0; i < 10; i++) {
      const id = (await caller.post("/employee", { firstName: "E", lastName: String(i) }).expect(201)).body.data.id as string;
      const statuses = (await Promise.all([caller.delete(`/employee/${id}`), caller.delete(`/employee/${id}`)])).map((r) => r.status);
      expect(statuses.sort()).toEqual([200, 404]);
    }
  });
});
