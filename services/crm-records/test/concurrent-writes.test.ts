// A record deleted by another request between an update's read and its write: the update must
// answer 404001 (the record is gone), never Prisma's P2025 as a 500. Made deterministic by a query
// hook that commits the delete on another connection just before the update's write runs.
import { describePostgres } from "@crm/testing";
import { createApp } from "../src/app";
import type { PrismaClient } from "../src/persistence/prisma";
import request from "supertest";
import { signInternalToken } from "@crm/service-kit";
import { createClient, logger, openHarness, principalFor, SECRET, type Harness } from "./harness";

const NOT_FOUND = { success: false, error: { code: 404001, message: "Resource not found" } };
const item = { description: "Work", quantity: 1, unitPrice: 100 };

describePostgres("update racing a delete (PostgreSQL, real concurrency)", () => {
  let h: Harness;
  let beforeWrite: (() => Promise<void>) | undefined;
  let raced: ReturnType<typeof createApp>;

  beforeAll(async () => {
    h = await openHarness("postgres");
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
    raced = createApp({ logger, prisma: hooked, internalTokenSecret: SECRET, parallelQueries: true });
  });
  afterAll(() => h?.close());

  it.each([
    ["employee", { firstName: "E", lastName: "One" }, { position: "Lead" }],
    ["product", { name: "P" }, { name: "Q" }],
    ["invoice", "client", { items: [item, item] }],
  ] as const)("%s: deleted after the update read it -> 404001, nothing written", async (entity, body, patch) => {
    const caller = h.caller();
    const createBody = body === "client" ? { clientId: await createClient(caller), items: [item] } : body;
    const id = (await caller.post(`/${entity}`, createBody).expect(201)).body.data.id as string;
    const delegate = (h.prisma as unknown as Record<string, { delete(args: object): Promise<unknown>; findFirst(args: object): Promise<unknown> }>)[entity]!;
    beforeWrite = async () => {
      await delegate.delete({ where: { id } });
    };
    const token = signInternalToken({ principal: principalFor(caller.businessId) }, SECRET);
    const res = await request(raced).patch(`/api/v1/${entity}/${id}`).set("x-internal-token", token).send(patch);
    expect(beforeWrite).toBeUndefined();
    expect([res.status, res.body]).toEqual([404, NOT_FOUND]);
    expect(await delegate.findFirst({ where: { id } })).toBeNull();
    const updatedEvents = await h.prisma.$queryRawUnsafe<Array<{ n: number }>>(
      `SELECT count(*)::int AS n FROM records."OutboxEvent" WHERE payload->>'type' = $1 AND payload->'data'->>'id' = $2`,
      `${entity}.updated`,
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
