// Custom field values on records (extensions §E4): on every read, list, create, update, batch create
// and event, checked against the business's definitions, defaults, required, archive and permanent
// removal, previousAttributes, and unique values held by the database. PGlite and PostgreSQL.
import { allPermissions, type EventEnvelope } from "@crm/contracts";
import { describePostgres, internalCaller } from "@crm/testing";
import { createApp } from "../src/app";
import { logger, principalFor, SECRET, sharedHarness, type Caller, type Mode } from "./harness";

function valuesSuite(mode: Mode, config: NodeJS.ProcessEnv = {}): void {
  const h = sharedHarness(mode, { config });
  const admin = (businessId?: string): Caller => h.caller({ businessId, permissions: allPermissions });
  const events = async (caller: Caller) =>
    (await h.prisma.outboxEvent.findMany({ where: { key: caller.businessId }, orderBy: { sequence: "asc" } })).map((r) => r.payload as unknown as EventEnvelope);
  const codeOf = (res: { body: { error?: { code: number } } }) => res.body.error?.code;
  const pathsOf = (res: { body: { error?: { details?: Array<{ path: string }> } } }) => (res.body.error?.details ?? []).map((d) => d.path);

  async function define(caller: Caller, entity: string, body: object): Promise<void> {
    const res = await caller.post(`/${entity}/fields`, body);
    if (res.status !== 201) throw new Error(`define failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  it("a definition made through another replica shapes this replica's next list: its kept copy is only a guess (D34)", async () => {
    const a = admin();
    await a.post("/client", { firstName: "R", lastName: "One" }).expect(201);
    // This replica keeps the business's definitions (none yet).
    expect((await a.get("/client").expect(200)).body.data[0].customFields).toEqual({});
    const replica = createApp({ logger, prisma: h.prisma, internalTokenSecret: SECRET, sql: h.db.sql, parallelQueries: mode === "postgres" });
    const b = internalCaller(replica, principalFor(a.businessId, allPermissions), { prefix: "/api/v1" });
    await b.post("/client/fields", { key: "tier", label: "Tier", type: "text" }).expect(201);
    // A record from before the definition: its member, null.
    expect((await a.get("/client").expect(200)).body.data[0].customFields).toEqual({ tier: null });
    await b.patch(`/client/${(await a.get("/client").expect(200)).body.data[0].id}`, { customFields: { tier: "gold" } }).expect(200);
    await b.delete("/client/fields/tier").expect(200);
    expect((await a.get("/client").expect(200)).body.data[0].customFields).toEqual({});
  });

  it("a definition made through another replica holds for this replica's next create, single or batch: its statement confirms the kept copy (D34)", async () => {
    const a = admin();
    // This replica keeps the business's definitions (none yet).
    expect((await a.post("/client", { firstName: "R", lastName: "One" }).expect(201)).body.data.customFields).toEqual({});
    const replica = createApp({ logger, prisma: h.prisma, internalTokenSecret: SECRET, sql: h.db.sql, parallelQueries: mode === "postgres" });
    const b = internalCaller(replica, principalFor(a.businessId, allPermissions), { prefix: "/api/v1" });
    // A default the kept copy does not know: the create answers and stores it.
    await b.post("/client/fields", { key: "tier", label: "Tier", type: "text", defaultValue: "basic" }).expect(201);
    const defaulted = await a.post("/client", { firstName: "R", lastName: "Two" }).expect(201);
    expect(defaulted.body.data.customFields).toEqual({ tier: "basic" });
    expect((await b.get(`/client/${defaulted.body.data.id}`).expect(200)).body.data.customFields).toEqual({ tier: "basic" });
    // A key the kept copy does not know is taken, not refused as unknown.
    await b.post("/client/fields", { key: "source", label: "Source", type: "text" }).expect(201);
    const named = await a.post("/client", { firstName: "R", lastName: "Three", customFields: { source: "web" } }).expect(201);
    expect(named.body.data.customFields).toEqual({ tier: "basic", source: "web" });
    // A key archived since is refused, in a batch too, and nothing of the batch is written.
    await b.delete("/client/fields/source").expect(200);
    const refused = await a.post("/client/batch", { items: [{ firstName: "R", lastName: "Four", customFields: { source: "web" } }] });
    expect(refused.status).toBe(400);
    expect(pathsOf(refused)).toEqual(["items.0.customFields.source"]);
    expect((await a.get("/client?perPage=10").expect(200)).body.data.map((c: { lastName: string }) => c.lastName).sort()).toEqual(["One", "Three", "Two"]);
    await b.patch("/client/fields/tier", { defaultValue: "gold" }).expect(200);
    const batch = await a.post("/client/batch", { items: [{ firstName: "R", lastName: "Five" }] }).expect(201);
    expect(batch.body.data[0].customFields).toEqual({ tier: "gold" });
  });

  it("answers customFields on create, get, list, update and in events; defaults fill left-out keys", async () => {
    const a = admin();
    // Before any definition: an empty object.
    const plain = await a.post("/client", { firstName: "A", lastName: "B" }).expect(201);
    expect(plain.body.data.customFields).toEqual({});
    await define(a, "client", { key: "externalId", label: "External id", type: "text" });
    await define(a, "client", { key: "tier", label: "Tier", type: "select", options: ["gold", "silver"], defaultValue: "silver" });
    await define(a, "client", { key: "score", label: "Score", type: "number" });
    await define(a, "client", { key: "tags", label: "Tags", type: "multiSelect", options: ["vip", "new", "old"] });
    await define(a, "client", { key: "since", label: "Since", type: "dateTime" });

    const created = await a.post("/client", {
      firstName: "Ada",
      lastName: "L",
      customFields: { externalId: "x-1", score: 12.5, tags: ["vip", "new"], since: "2026-01-01T10:00:00+01:00" },
    });
    expect(created.status).toBe(201);
    const expected = { externalId: "x-1", tier: "silver", score: 12.5, tags: ["vip", "new"], since: "2026-01-01T09:00:00.000Z" };
    expect(created.body.data.customFields).toEqual(expected);
    // One member per active definition, in definition order, null when unset.
    expect(Object.keys(created.body.data.customFields)).toEqual(["externalId", "tier", "score", "tags", "since"]);
    const id = created.body.data.id as string;
    const got = await a.get(`/client/${id}`).expect(200);
    expect(got.body.data.customFields).toEqual(expected);
    expect((await a.get(`/client/${plain.body.data.id}`).expect(200)).body.data.customFields).toEqual({ externalId: null, tier: null, score: null, tags: null, since: null });
    const list = await a.get("/client?perPage=10").expect(200);
    expect(list.body.data.find((c: { id: string }) => c.id === id).customFields).toEqual(expected);

    // PATCH and PUT merge by key; null clears.
    const patched = await a.patch(`/client/${id}`, { customFields: { score: 3, tags: null } }).expect(200);
    expect(patched.body.data.customFields).toEqual({ ...expected, score: 3, tags: null });
    const put = await a.put(`/client/${id}`, { lastName: "Lovelace", customFields: { externalId: "x-2" } }).expect(200);
    expect(put.body.data.customFields).toEqual({ ...expected, externalId: "x-2", score: 3, tags: null });
    // An update without customFields leaves them be.
    expect((await a.patch(`/client/${id}`, { firstName: "Ada" }).expect(200)).body.data.customFields).toEqual(put.body.data.customFields);

    const emitted = (await events(a)).filter((e) => e.data["id"] === id);
    expect(emitted.map((e) => e.type)).toEqual(["client.created", "client.updated", "client.updated", "client.updated"]);
    expect(emitted[0]!.data["customFields"]).toEqual(expected);
    // previousAttributes: only the custom keys that changed.
    expect((emitted[1] as EventEnvelope & { previousAttributes: object }).previousAttributes).toEqual({ customFields: { score: 12.5, tags: ["vip", "new"] } });
    expect((emitted[2] as EventEnvelope & { previousAttributes: object }).previousAttributes).toEqual({ lastName: "L", customFields: { externalId: "x-1" } });
    expect((emitted[3] as EventEnvelope & { previousAttributes: object }).previousAttributes).toEqual({});
  });

  it("refuses unknown, archived, wrong-typed and missing required values at customFields.<key>", async () => {
    const a = admin();
    await define(a, "product", { key: "weight", label: "Weight", type: "number" });
    await define(a, "product", { key: "code", label: "Code", type: "text", required: true });
    await define(a, "product", { key: "old", label: "Old", type: "text" });
    await a.delete("/product/fields/old").expect(200);
    const cases: Array<[object, string[]]> = [
      [{ name: "P" }, ["customFields.code"]],
      [{ name: "P", customFields: { code: null } }, ["customFields.code"]],
      [{ name: "P", customFields: { code: "c", nope: 1 } }, ["customFields.nope"]],
      [{ name: "P", customFields: { code: "c", old: "x" } }, ["customFields.old"]],
      [{ name: "P", customFields: { code: 5, weight: 1.23456 } }, ["customFields.code", "customFields.weight"]],
      [{ name: "P", customFields: ["code"] }, ["customFields"]],
    ];
    for (const [body, paths] of cases) {
      const res = await a.post("/product", body);
      expect([body, res.status, codeOf(res), pathsOf(res)]).toEqual([body, 400, 400001, paths]);
    }
    const id = (await a.post("/product", { name: "P", customFields: { code: "c" } }).expect(201)).body.data.id as string;
    const cleared = await a.patch(`/product/${id}`, { customFields: { code: null } });
    expect([cleared.status, pathsOf(cleared)]).toEqual([400, ["customFields.code"]]);
    // Nothing of a refused update is written.
    expect((await a.get(`/product/${id}`).expect(200)).body.data.customFields).toEqual({ weight: null, code: "c" });

    const batch = await a.post("/product/batch", {
      items: [
        { name: "ok", customFields: { code: "a" } },
        { name: "bad", customFields: { code: "b", weight: "heavy" } },
      ],
    });
    expect([batch.status, pathsOf(batch)]).toEqual([400, ["items.1.customFields.weight"]]);
  });

  it("archiving hides values from answers and events and keeps them; un-archiving brings them back; permanent removal drops them", async () => {
    const a = admin();
    await define(a, "employee", { key: "badge", label: "Badge", type: "integer" });
    const id = (await a.post("/employee", { firstName: "E", lastName: "F", customFields: { badge: 7 } }).expect(201)).body.data.id as string;
    await a.delete("/employee/fields/badge").expect(200);
    expect((await a.get(`/employee/${id}`).expect(200)).body.data.customFields).toEqual({});
    const updated = await a.patch(`/employee/${id}`, { position: "Lead" }).expect(200);
    expect(updated.body.data.customFields).toEqual({});
    const last = (await events(a)).at(-1)!;
    expect(last.data["customFields"]).toEqual({});
    await a.patch("/employee/fields/badge", { isArchived: false }).expect(200);
    expect((await a.get(`/employee/${id}`).expect(200)).body.data.customFields).toEqual({ badge: 7 });

    await a.delete("/employee/fields/badge").expect(200);
    await a.delete("/employee/fields/badge?permanent=true").expect(200);
    await define(a, "employee", { key: "badge", label: "Badge", type: "text" });
    expect((await a.get(`/employee/${id}`).expect(200)).body.data.customFields).toEqual({ badge: null });
  });

  it("batch create fills and checks every item; each event carries its values", async () => {
    const a = admin();
    await define(a, "service", { key: "rate", label: "Rate", type: "integer", defaultValue: 10 });
    const res = await a.post("/service/batch", { items: [{ name: "S1" }, { name: "S2", customFields: { rate: 20 } }] }).expect(201);
    expect(res.body.data.map((s: { customFields: object }) => s.customFields)).toEqual([{ rate: 10 }, { rate: 20 }]);
    const emitted = (await events(a)).slice(-2);
    expect(emitted.map((e) => e.data)).toEqual(res.body.data);
  });

  it("another business's definitions never shape this business's records", async () => {
    const a = admin();
    const b = admin();
    await define(a, "contact", { key: "channel", label: "Channel", type: "text", required: true });
    const clientId = (await b.post("/client", { firstName: "B", lastName: "B" }).expect(201)).body.data.id as string;
    const contact = await b.post("/contact", { clientId, type: "EMAIL", value: "b@example.com" }).expect(201);
    expect(contact.body.data.customFields).toEqual({});
    expect(pathsOf(await b.post("/contact", { clientId, type: "EMAIL", value: "b@example.com", customFields: { channel: "x" } }))).toEqual(["customFields.channel"]);
  });

  it("a unique value is held by one live record: 409001 at its path, also between concurrent creates; a delete frees it", async () => {
    const a = admin();
    await define(a, "client", { key: "externalId", label: "External id", type: "text", unique: true });
    const first = await a.post("/client", { firstName: "A", lastName: "A", customFields: { externalId: "ext-1" } }).expect(201);
    const again = await a.post("/client", { firstName: "B", lastName: "B", customFields: { externalId: "ext-1" } });
    expect([again.status, codeOf(again), pathsOf(again)]).toEqual([409, 409001, ["customFields.externalId"]]);
    // Another business may hold the same value.
    const b = admin();
    await define(b, "client", { key: "externalId", label: "External id", type: "text", unique: true });
    await b.post("/client", { firstName: "B", lastName: "B", customFields: { externalId: "ext-1" } }).expect(201);

    const second = await a.post("/client", { firstName: "C", lastName: "C", customFields: { externalId: "ext-2" } }).expect(201);
    const taken = await a.patch(`/client/${second.body.data.id}`, { customFields: { externalId: "ext-1" } });
    expect([taken.status, codeOf(taken), pathsOf(taken)]).toEqual([409, 409001, ["customFields.externalId"]]);
    // Setting one's own value again is no conflict.
    await a.patch(`/client/${first.body.data.id}`, { customFields: { externalId: "ext-1" } }).expect(200);

    const batch = await a.post("/client/batch", {
      items: [
        { firstName: "D", lastName: "D", customFields: { externalId: "ext-3" } },
        { firstName: "E", lastName: "E", customFields: { externalId: "ext-3" } },
      ],
    });
    expect([batch.status, codeOf(batch), pathsOf(batch)]).toEqual([409, 409001, ["items.1.customFields.externalId"]]);
    const batchTaken = await a.post("/client/batch", { items: [{ firstName: "F", lastName: "F", customFields: { externalId: "ext-2" } }] });
    expect([batchTaken.status, pathsOf(batchTaken)]).toEqual([409, ["items.0.customFields.externalId"]]);

    const racers = await Promise.all(Array.from({ length: 6 }, (_, i) => a.post("/client", { firstName: `R${i}`, lastName: "R", customFields: { externalId: "race" } })));
    expect(racers.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);

    // Cleared or deleted, a value is free again.
    await a.patch(`/client/${second.body.data.id}`, { customFields: { externalId: null } }).expect(200);
    await a.post("/client", { firstName: "G", lastName: "G", customFields: { externalId: "ext-2" } }).expect(201);
    await a.delete(`/client/${first.body.data.id}`).expect(200);
    await a.post("/client", { firstName: "H", lastName: "H", customFields: { externalId: "ext-1" } }).expect(201);
  });

  it("fields=customFields.<key> keeps only those keys (extensions §E8); an unknown or archived key is 400019", async () => {
    const a = admin();
    await define(a, "client", { key: "region", label: "Region", type: "text" });
    await define(a, "client", { key: "size", label: "Size", type: "integer" });
    await define(a, "client", { key: "gone", label: "Gone", type: "text" });
    await a.delete("/client/fields/gone").expect(200);
    const id = (await a.post("/client", { firstName: "F", lastName: "S", customFields: { region: "EU", size: 3 } }).expect(201)).body.data.id as string;
    const one = await a.get(`/client/${id}?fields=lastName,customFields.size`).expect(200);
    expect(one.body.data).toEqual({ id, lastName: "S", customFields: { size: 3 } });
    const list = await a.get("/client?fields=customFields.region").expect(200);
    expect(list.body.data).toEqual([{ id, customFields: { region: "EU" } }]);
    for (const fields of ["customFields.gone", "customFields.nope", "customFields"]) {
      const res = await a.get(`/client/${id}?fields=${fields}`);
      expect([fields, res.status, codeOf(res), pathsOf(res)]).toEqual([fields, 400, 400019, ["fields"]]);
    }
  });

  it("a definition added while creates run shapes every create that starts after it commits", async () => {
    const a = admin();
    const creates = Array.from({ length: 12 }, (_, i) => a.post("/client", { firstName: `W${i}`, lastName: "W" }).then((res) => res));
    const defined = a.post("/client/fields", { key: "region", label: "Region", type: "text", defaultValue: "EU" });
    const answers = await Promise.all([...creates, defined]);
    for (const res of answers.slice(0, -1)) {
      expect(res.status).toBe(201);
      // Each answer is the stored record as the definitions it was written under show it.
      expect([{}, { region: "EU" }]).toContainEqual(res.body.data.customFields);
    }
    expect(answers.at(-1)!.status).toBe(201);
    const after = await a.post("/client", { firstName: "After", lastName: "W" }).expect(201);
    expect(after.body.data.customFields).toEqual({ region: "EU" });
  });
}

describe("custom field values on PGlite", () => valuesSuite("pglite"));
describePostgres("custom field values on PostgreSQL", () => valuesSuite("postgres"));
describePostgres("custom field values on PostgreSQL, each request reading the definitions' version first (D34 off)", () =>
  valuesSuite("postgres", { RECORDS_KEPT_DEFINITIONS: "false" }),
);
