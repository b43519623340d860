// lastUsedAt reporting: per-request cost is a Map write; one report per flush carries each key's
// latest use; a failed report is retried with the next one; closing flushes.
import supertest from "supertest";
import { MemoryKvStore } from "@crm/kv-store";
import { ApiKeyUsage, type ApiKeyUse } from "../src/security/api-key-usage";
import { buildGateway, FakeIdentity } from "./support/security.fixture";

const quiet = { warn: () => undefined };

describe("ApiKeyUsage", () => {
  it("reports each key once per flush, with its latest use", async () => {
    const reports: ApiKeyUse[][] = [];
    let clock = 1_000_000;
    const usage = new ApiKeyUsage(
      async (uses) => void reports.push(uses),
      60_000,
      quiet,
      () => clock,
    );
    for (let i = 0; i < 100; i++) {
      usage.record("a", "192.0.2.1");
      usage.record("b", "192.0.2.2");
      clock += 10;
    }
    usage.record("a", "192.0.2.1");
    expect(reports).toEqual([]);
    await usage.flush();
    expect(reports).toEqual([
      [
        { id: "a", at: new Date(clock).toISOString(), ip: "192.0.2.1" },
        { id: "b", at: new Date(clock - 10).toISOString(), ip: "192.0.2.2" },
      ],
    ]);
    await usage.flush();
    expect(reports).toHaveLength(1); // nothing new, nothing sent
    await usage.close();
  });

  it("keeps a failed report for the next flush, without moving a newer use back", async () => {
    const reports: ApiKeyUse[][] = [];
    let fail = true;
    let clock = 5_000;
    const usage = new ApiKeyUsage(
      async (uses) => {
        if (fail) throw new Error("identity down");
        reports.push(uses);
      },
      60_000,
      quiet,
      () => clock,
    );
    usage.record("a", "192.0.2.1");
    usage.record("b", "192.0.2.2");
    await usage.flush();
    clock = 9_000;
    usage.record("b", "192.0.2.2");
    fail = false;
    await usage.flush();
    expect(reports).toHaveLength(1);
    expect([...reports[0]!].sort((x, y) => x.id.localeCompare(y.id))).toEqual([
      { id: "a", at: new Date(5_000).toISOString(), ip: "192.0.2.1" },
      { id: "b", at: new Date(9_000).toISOString(), ip: "192.0.2.2" },
    ]);
    await usage.close();
  });

  it("flushes on close", async () => {
    const reports: ApiKeyUse[][] = [];
    const usage = new ApiKeyUsage(async (uses) => void reports.push(uses), 60_000, quiet);
    usage.record("k", "192.0.2.3");
    await usage.close();
    expect(reports.map((r) => r.map((u) => u.id))).toEqual([["k"]]);
  });
});

describe("gateway: API-key use reaches identity in batches, not per request", () => {
  it("sends nothing per request, then one report naming the key", async () => {
    const kv = new MemoryKvStore();
    const identity = new FakeIdentity(kv);
    await identity.start();
    const gw = buildGateway(kv, identity.url, { RATE_LIMIT_MAX: 100_000, API_KEY_USAGE_FLUSH_MS: 60_000 });
    try {
      const owner = await identity.addUser("OWNER");
      const { key, id } = await identity.createKey(owner);
      const { token } = await identity.signIn(owner);
      for (let i = 0; i < 20; i++) expect((await supertest(gw.app).get("/api/v1/client").set("x-api-key", key)).status).toBe(200);
      await supertest(gw.app).get("/api/v1/client").set("authorization", `Bearer ${token}`);
      expect(identity.useReports).toEqual([]);
      await gw.security.close(); // flushes
      expect(identity.useReports).toHaveLength(1);
      expect(identity.useReports[0]!.map((u) => u.id)).toEqual([id]);
      expect(Date.parse(identity.useReports[0]![0]!.at)).toBeLessThanOrEqual(Date.now());
    } finally {
      await identity.stop();
      await kv.close();
    }
  });
});
