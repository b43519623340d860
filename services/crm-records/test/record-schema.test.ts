// GET /api/v1/{entity}/schema (extensions §E4): a JSON Schema (draft 2020-12) of the record as this
// business sees it. Every record the API returns (get, list, create, update; relations as included
// and as left out; nulls; line items) validates against it with a real validator, and only this
// business's active definitions show.
import { allPermissions, permission, type RecordEntity } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { sharedHarness, type Caller, type Mode } from "./harness";

type Json = Record<string, any>;

function schemaSuite(mode: Mode): void {
  const h = sharedHarness(mode);
  const admin = (businessId?: string): Caller => h.caller({ businessId, permissions: allPermissions });

  /** A strict validator: unknown keywords or a malformed schema fail the compile. */
  function validatorOf(schema: Json) {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats(ajv);
    return ajv.compile(schema);
  }

  async function schemaOf(caller: Caller, entity: RecordEntity): Promise<Json> {
    const res = await caller.get(`/${entity}/schema`);
    if (res.status !== 200) throw new Error(`schema of ${entity}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.data as Json;
  }

  /** Checks every record against its entity's schema; returns the problems, empty when all validate. */
  async function problems(caller: Caller, entity: RecordEntity, records: readonly Json[]): Promise<string[]> {
    const validate = validatorOf(await schemaOf(caller, entity));
    return records.flatMap((record) => (validate(record) ? [] : [`${entity} ${record["id"]}: ${JSON.stringify(validate.errors)}`]));
  }

  async function define(caller: Caller, entity: string, body: object): Promise<void> {
    const res = await caller.post(`/${entity}/fields`, body);
    if (res.status !== 201) throw new Error(`define failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  /** One definition of every type on `entity` (keys prefixed, so they differ per entity). */
  async function defineEveryType(caller: Caller, entity: string): Promise<void> {
    await define(caller, entity, { key: "ref", label: "Reference", type: "text", unique: true });
    await define(caller, entity, { key: "memo", label: "Memo", type: "longText" });
    await define(caller, entity, { key: "score", label: "Score", type: "number", defaultValue: 1.5 });
    await define(caller, entity, { key: "seats", label: "Seats", type: "integer" });
    await define(caller, entity, { key: "vip", label: "VIP", type: "boolean" });
    await define(caller, entity, { key: "since", label: "Since", type: "date" });
    await define(caller, entity, { key: "seen", label: "Seen", type: "dateTime" });
    await define(caller, entity, { key: "mail", label: "Mail", type: "email" });
    await define(caller, entity, { key: "site", label: "Site", type: "url" });
    await define(caller, entity, { key: "tier", label: "Tier", type: "select", options: ["gold", "silver"] });
    await define(caller, entity, { key: "tags", label: "Tags", type: "multiSelect", options: ["a", "b", "c"] });
  }

  const fullValues = (n: number) => ({
    ref: `ref-${n}`,
    memo: "x".repeat(2000),
    score: 0.3,
    seats: -7,
    vip: true,
    since: "2024-02-29",
    seen: "2026-01-31T09:30:00.5+02:00",
    mail: "o'neil+crm@mail.example.com",
    site: "HTTPS://Example.com/a?b=c",
    tier: "gold",
    tags: ["c", "a"],
  });

  it("describes each entity's record, custom fields included, and every record the API returns validates against it", async () => {
    const a = admin();
    for (const entity of ["client", "contact", "invoice", "quote", "product"] as const) await defineEveryType(a, entity);
    // Archived: left out of the schema as it is of every answer.
    await define(a, "client", { key: "gone", label: "Gone", type: "text" });
    await a.delete("/client/fields/gone").expect(200);

    const bare = (await a.post("/client", { firstName: "Bare", lastName: "Client" }).expect(201)).body.data as Json;
    const full = (await a.post("/client", { firstName: "Full", lastName: "Client", email: "f@example.com", customFields: fullValues(1) }).expect(201)).body.data as Json;
    const clientId = full["id"] as string;
    const contact = (await a.post("/contact", { clientId, type: "EMAIL", value: "c@example.com", customFields: fullValues(2) }).expect(201)).body.data as Json;
    const item = { description: "Work", quantity: 1.5, unitPrice: 10.1 };
    const invoice = (await a.post("/invoice", { clientId, items: [item, item], customFields: fullValues(3) }).expect(201)).body.data as Json;
    const quote = (await a.post("/quote", { clientId, items: [item], validUntil: "2026-12-31" }).expect(201)).body.data as Json;
    const product = (await a.post("/product", { name: "P", unitPrice: 5, customFields: { ...fullValues(4), tags: [] } }).expect(201)).body.data as Json;
    const updated = (await a.patch(`/invoice/${invoice["id"]}`, { customFields: { tier: null, tags: ["b"] } }).expect(200)).body.data as Json;
    // Write answers, against the schema of the definitions they were written under.
    const written: Array<[RecordEntity, Json[]]> = [
      ["client", [bare, full]],
      ["contact", [contact]],
      ["invoice", [invoice, updated]],
      ["quote", [quote]],
      ["product", [product]],
    ];
    for (const [entity, records] of written) expect(await problems(a, entity, records)).toEqual([]);
    // A definition made required after records exist: they still answer null for it.
    await define(a, "client", { key: "region", label: "Region", type: "text", required: true });

    const answers: Array<[RecordEntity, Json[]]> = [
      ["client", (await a.get(`/client/${bare["id"]}`).expect(200)).body.data],
      ["client", (await a.get(`/client/${clientId}?include=contacts,invoices,quotes`).expect(200)).body.data],
      ["client", (await a.get("/client?include=-contacts").expect(200)).body.data],
      ["client", (await a.get("/client?perPage=10").expect(200)).body.data],
      ["contact", (await a.get(`/contact/${contact["id"]}?include=client`).expect(200)).body.data],
      ["invoice", (await a.get(`/invoice/${invoice["id"]}?include=client`).expect(200)).body.data],
      ["invoice", (await a.get("/invoice").expect(200)).body.data],
      ["quote", (await a.get(`/quote/${quote["id"]}`).expect(200)).body.data],
      ["product", (await a.get("/product").expect(200)).body.data],
    ];
    for (const [entity, records] of answers) expect(await problems(a, entity, [records].flat())).toEqual([]);
    // The include-all read above did carry the relations it validated.
    const included = answers[1]![1] as unknown as Json;
    expect(included["customFields"]["region"]).toBeNull();
    expect([included["contacts"].length, included["invoices"].length, included["quotes"].length]).toEqual([1, 1, 1]);

    // A trashed record read with deleted=include validates too (deletedAt set).
    await a.delete(`/product/${product["id"]}`).expect(200);
    expect(await problems(a, "product", [(await a.get(`/product/${product["id"]}?deleted=include`).expect(200)).body.data])).toEqual([]);

    // Event data (the record without relations) validates too, for the entities whose definitions did not change since.
    const events = await h.prisma.outboxEvent.findMany({ where: { key: a.businessId }, orderBy: { sequence: "asc" } });
    const data = (entity: string) =>
      events
        .map((row) => row.payload as { type: string; data: Json })
        .filter((e) => e.type.startsWith(`${entity}.`))
        .map((e) => e.data);
    for (const entity of ["contact", "invoice", "quote", "product"] as const) {
      expect(data(entity).length).toBeGreaterThan(0);
      expect(await problems(a, entity, data(entity))).toEqual([]);
    }

    const client = await schemaOf(a, "client");
    expect(client["$schema"]).toBe("https://json-schema.org/draft/2020-12/schema");
    const custom = client["properties"]["customFields"];
    expect(Object.keys(custom.properties)).toEqual(["ref", "memo", "score", "seats", "vip", "since", "seen", "mail", "site", "tier", "tags", "region"]);
    expect(custom.required).toEqual(Object.keys(custom.properties));
    expect(custom.additionalProperties).toBe(false);
    expect(custom.properties.ref).toMatchObject({ title: "Reference", type: ["string", "null"], maxLength: 1000 });
    expect(custom.properties.memo).toMatchObject({ type: ["string", "null"], maxLength: 65_536 });
    expect(custom.properties.score).toMatchObject({ type: ["number", "null"], default: 1.5 });
    expect(custom.properties.seats).toMatchObject({ type: ["integer", "null"] });
    expect(custom.properties.tier).toMatchObject({ enum: ["gold", "silver", null] });
    expect(custom.properties.tags).toMatchObject({ type: ["array", "null"], items: { enum: ["a", "b", "c"] }, uniqueItems: true });
    expect(custom.properties.region.description).toContain("Required");
    expect(custom.properties.ref.description).toContain("Unique");
    // The relations' records carry their own entity's custom fields.
    expect(Object.keys(client["properties"]["contacts"].items.properties.customFields.properties)).toContain("tags");
    expect(client["properties"]["id"]).toEqual({ type: "string", format: "uuid" });
    expect(client["properties"]["deletedAt"]).toEqual({ type: ["string", "null"], format: "date-time" });
    expect(client["required"]).toContain("customFields");
    expect(client["required"]).not.toContain("contacts");
  });

  it("fails records the business's definitions would refuse (the schema is not a blank check)", async () => {
    const a = admin();
    await defineEveryType(a, "service");
    const record = (await a.post("/service", { name: "S", unitPrice: 1, customFields: fullValues(1) }).expect(201)).body.data as Json;
    const validate = validatorOf(await schemaOf(a, "service"));
    expect(validate(record)).toBe(true);
    const wrong: Array<[string, unknown]> = [
      ["ref", "x".repeat(1001)],
      ["score", "1"],
      ["seats", 1.5],
      ["since", "2023-02-29"],
      ["mail", "not-mail"],
      ["site", "ftp://example.com"],
      ["tier", "bronze"],
      ["tags", ["a", "a"]],
      ["tags", ["z"]],
      ["nope", 1],
    ];
    for (const [key, value] of wrong) expect([key, validate({ ...record, customFields: { ...record["customFields"], [key]: value } })]).toEqual([key, false]);
    const { vip: _vip, ...missing } = record["customFields"] as Json;
    expect(validate({ ...record, customFields: missing })).toBe(false);
    expect(validate({ ...record, unitPrice: "1" })).toBe(false);
  });

  it("shows only the caller's business's definitions, needs {resource}.read, and `schema` is never a record id", async () => {
    const a = admin();
    const b = admin();
    await define(a, "employee", { key: "badge", label: "Badge", type: "text" });
    expect(Object.keys((await schemaOf(a, "employee"))["properties"]["customFields"].properties)).toEqual(["badge"]);
    const other = await schemaOf(b, "employee");
    expect(other["properties"]["customFields"].properties).toEqual({});
    expect(JSON.stringify(other)).not.toContain("badge");
    // A record of a business without definitions validates with customFields {}.
    const plain = (await b.post("/employee", { firstName: "E", lastName: "F" }).expect(201)).body.data as Json;
    expect(validatorOf(other)(plain)).toBe(true);

    const reader = h.caller({ businessId: a.businessId, permissions: [permission("employees", "read")] });
    expect((await reader.get("/employee/schema")).status).toBe(200);
    const stranger = h.caller({ businessId: a.businessId, permissions: [permission("clients", "read")] });
    const refused = await stranger.get("/employee/schema");
    expect([refused.status, refused.body.error?.code]).toEqual([401, 401014]);
    // A write to /{entity}/schema is no record's: the id "schema" is nobody's (404001), never a 500.
    for (const res of [await a.patch("/employee/schema", { firstName: "X" }), await a.delete("/employee/schema")]) {
      expect([res.status, res.body.error?.code]).toEqual([404, 404001]);
    }
  });
}

describe("record JSON Schema on PGlite", () => schemaSuite("pglite"));
describePostgres("record JSON Schema on PostgreSQL", () => schemaSuite("postgres"));
