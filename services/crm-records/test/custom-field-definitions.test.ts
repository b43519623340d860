// Custom field definitions (extensions §E4): list, read, define, change, archive and remove for good,
// each rule of a definition, the limits, and who may write them. PGlite and PostgreSQL.
import { allPermissions, CUSTOM_FIELD_LIMITS, customFieldTypes } from "@crm/contracts";
import { describePostgres } from "@crm/testing";
import { allRecordPermissions, sharedHarness, type Caller, type Mode } from "./harness";

const VALIDATION = 400001;

function definitionsSuite(mode: Mode): void {
  const h = sharedHarness(mode);
  const admin = (businessId?: string): Caller => h.caller({ businessId, permissions: allPermissions });
  const codeOf = (res: { body: { error?: { code: number } } }) => res.body.error?.code;
  const pathsOf = (res: { body: { error?: { details?: Array<{ path: string }> } } }) => (res.body.error?.details ?? []).map((d) => d.path);

  it("defines, lists, reads, changes, archives, brings back and removes a definition", async () => {
    const a = admin();
    const created = await a.post("/client/fields", { key: "externalId", label: "External id", type: "text", unique: true, description: "From the old CRM" });
    expect(created.status).toBe(201);
    expect(created.body.data).toEqual({
      key: "externalId",
      label: "External id",
      description: "From the old CRM",
      type: "text",
      required: false,
      unique: true,
      options: null,
      defaultValue: null,
      isArchived: false,
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    await a.post("/client/fields", { key: "tier", label: "Tier", type: "select", options: ["gold", "silver"], defaultValue: "silver" }).expect(201);
    const list = await a.get("/client/fields").expect(200);
    expect(list.body.data.map((d: { key: string }) => d.key)).toEqual(["externalId", "tier"]);
    expect((await a.get("/client/fields/tier").expect(200)).body.data.defaultValue).toBe("silver");
    // Another entity's definitions are its own.
    expect((await a.get("/product/fields").expect(200)).body.data).toEqual([]);
    expect(codeOf(await a.get("/product/fields/tier"))).toBe(404001);

    const changed = await a.patch("/client/fields/tier", { label: "Level", options: ["gold", "silver", "bronze"], defaultValue: "bronze", required: true }).expect(200);
    expect(changed.body.data).toMatchObject({ label: "Level", options: ["gold", "silver", "bronze"], defaultValue: "bronze", required: true });

    const archived = await a.delete("/client/fields/tier").expect(200);
    expect(archived.body.data.isArchived).toBe(true);
    expect((await a.get("/client/fields").expect(200)).body.data.map((d: { isArchived: boolean }) => d.isArchived)).toEqual([false, true]);
    expect((await a.patch("/client/fields/tier", { isArchived: false }).expect(200)).body.data.isArchived).toBe(false);

    // Only an archived definition can be removed for good; then its key is free again.
    const live = await a.delete("/client/fields/tier?permanent=true");
    expect([live.status, codeOf(live)]).toEqual([409, 409007]);
    await a.delete("/client/fields/tier").expect(200);
    expect((await a.delete("/client/fields/tier?permanent=true").expect(200)).body.data.key).toBe("tier");
    expect(codeOf(await a.get("/client/fields/tier"))).toBe(404001);
    await a.post("/client/fields", { key: "tier", label: "Tier", type: "integer" }).expect(201);
    expect(codeOf(await a.delete("/client/fields/tier?permanent=maybe"))).toBe(VALIDATION);
  });

  it("writes are for administrators (users.update), reads for {resource}.read; another business sees nothing", async () => {
    const a = admin();
    await a.post("/employee/fields", { key: "badge", label: "Badge", type: "text" }).expect(201);
    const member = h.caller({ businessId: a.businessId, permissions: allRecordPermissions });
    expect((await member.get("/employee/fields").expect(200)).body.data).toHaveLength(1);
    for (const res of [
      await member.post("/employee/fields", { key: "other", label: "Other", type: "text" }),
      await member.patch("/employee/fields/badge", { label: "x" }),
      await member.delete("/employee/fields/badge"),
    ]) {
      expect([res.status, codeOf(res)]).toEqual([401, 401014]);
    }
    const noRead = h.caller({ businessId: a.businessId, permissions: allPermissions.filter((p) => p !== "employees.read") });
    expect(codeOf(await noRead.get("/employee/fields"))).toBe(401014);
    const stranger = admin();
    expect((await stranger.get("/employee/fields").expect(200)).body.data).toEqual([]);
    expect(codeOf(await stranger.get("/employee/fields/badge"))).toBe(404001);
    expect(codeOf(await stranger.patch("/employee/fields/badge", { label: "x" }))).toBe(404001);
    expect(codeOf(await stranger.delete("/employee/fields/badge"))).toBe(404001);
    // The same key is free in another business.
    await stranger.post("/employee/fields", { key: "badge", label: "Badge", type: "integer" }).expect(201);
  });

  it("refuses a bad key, a built-in name, a duplicate key (archived ones too) and bad options", async () => {
    const a = admin();
    for (const key of ["ExternalId", "1st", "with-dash", "a".repeat(64), ""]) {
      const res = await a.post("/client/fields", { key, label: "x", type: "text" });
      expect([key, res.status, codeOf(res), pathsOf(res)]).toEqual([key, 400, VALIDATION, ["key"]]);
    }
    for (const [entity, key] of [
      ["client", "firstName"],
      ["client", "contacts"],
      ["client", "contactsTruncated"],
      ["client", "customFields"],
      ["invoice", "items"],
      ["invoice", "client"],
      ["product", "createdAt"],
    ] as const) {
      const res = await a.post(`/${entity}/fields`, { key, label: "x", type: "text" });
      expect([key, res.status, codeOf(res), pathsOf(res)]).toEqual([key, 400, VALIDATION, ["key"]]);
    }
    await a.post("/client/fields", { key: "code", label: "Code", type: "text" }).expect(201);
    const duplicate = await a.post("/client/fields", { key: "code", label: "Code", type: "integer" });
    expect([duplicate.status, codeOf(duplicate)]).toEqual([409, 409001]);
    await a.delete("/client/fields/code").expect(200);
    expect(codeOf(await a.post("/client/fields", { key: "code", label: "Code", type: "text" }))).toBe(409001);

    const cases: Array<[object, string]> = [
      [{ key: "s1", label: "x", type: "select" }, "options"],
      [{ key: "s2", label: "x", type: "select", options: [] }, "options"],
      [{ key: "s3", label: "x", type: "multiSelect", options: ["a", "a"] }, "options"],
      [{ key: "s4", label: "x", type: "select", options: ["bad/option"] }, "options.0"],
      [{ key: "s5", label: "x", type: "select", options: Array.from({ length: CUSTOM_FIELD_LIMITS.optionsMax + 1 }, (_, i) => `o${i}`) }, "options"],
      [{ key: "s6", label: "x", type: "text", options: ["a"] }, "options"],
      [{ key: "s7", label: "x", type: "colour" }, "type"],
      [{ key: "s8", label: "x", type: "integer", defaultValue: 1.5 }, "defaultValue"],
      [{ key: "s9", label: "x", type: "select", options: ["a"], defaultValue: "b" }, "defaultValue"],
      [{ key: "s10", label: "x", type: "date", defaultValue: "2026-02-30" }, "defaultValue"],
      [{ key: "s11", label: "", type: "text" }, "label"],
      [{ key: "s12", label: "x", type: "text", isArchived: true }, "isArchived"],
    ];
    for (const [body, path] of cases) {
      const res = await a.post("/client/fields", body);
      expect([body, res.status, codeOf(res), pathsOf(res)]).toEqual([body, 400, VALIDATION, [path]]);
    }
    // Every type can be defined.
    for (const type of customFieldTypes) {
      const options = type === "select" || type === "multiSelect" ? { options: ["a", "b"] } : {};
      await a.post("/quote/fields", { key: `f${type}`, label: type, type, ...options }).expect(201);
    }
  });

  it("changes: type only text -> longText, options only added, key and unique never", async () => {
    const a = admin();
    await a.post("/product/fields", { key: "note", label: "Note", type: "text" }).expect(201);
    await a.post("/product/fields", { key: "size", label: "Size", type: "select", options: ["S", "M"] }).expect(201);
    await a.post("/product/fields", { key: "count", label: "Count", type: "integer" }).expect(201);
    expect((await a.patch("/product/fields/note", { type: "longText" }).expect(200)).body.data.type).toBe("longText");
    const cases: Array<[string, object, string]> = [
      ["note", { type: "text" }, "type"],
      ["count", { type: "number" }, "type"],
      ["size", { type: "multiSelect" }, "type"],
      ["size", { options: ["S"] }, "options"],
      ["size", { options: ["S", "M", "M"] }, "options"],
      // Removing every option (null) is removing options, not a 500.
      ["size", { options: null }, "options"],
      ["count", { options: ["a"] }, "options"],
      ["count", { defaultValue: "seven" }, "defaultValue"],
      ["size", { defaultValue: "XL" }, "defaultValue"],
      ["count", { key: "other" }, "key"],
      ["count", { unique: true }, "unique"],
    ];
    for (const [key, body, path] of cases) {
      const res = await a.patch(`/product/fields/${key}`, body);
      expect([key, body, res.status, codeOf(res), pathsOf(res)]).toEqual([key, body, 400, VALIDATION, [path]]);
    }
    const grown = await a.patch("/product/fields/size", { options: ["M", "S", "L"], defaultValue: "L" }).expect(200);
    expect(grown.body.data).toMatchObject({ options: ["M", "S", "L"], defaultValue: "L" });
    expect((await a.patch("/product/fields/size", { defaultValue: null }).expect(200)).body.data.defaultValue).toBeNull();
    expect(codeOf(await a.patch("/product/fields/unknown", { label: "x" }))).toBe(404001);
  });

  it("at most 100 definitions per entity (archived included) and 10 unique ones: 409006", async () => {
    const a = admin();
    for (let i = 0; i < CUSTOM_FIELD_LIMITS.uniquePerEntity; i++) {
      await a.post("/service/fields", { key: `u${i}`, label: "u", type: "text", unique: true }).expect(201);
    }
    await a.delete("/service/fields/u0").expect(200);
    const unique = await a.post("/service/fields", { key: "u10", label: "u", type: "text", unique: true });
    expect([unique.status, codeOf(unique)]).toEqual([409, 409006]);
    expect(unique.body.error.message).toBe("Limit reached");
    for (let i = CUSTOM_FIELD_LIMITS.uniquePerEntity; i < CUSTOM_FIELD_LIMITS.perEntity; i++) {
      await a.post("/service/fields", { key: `f${i}`, label: "f", type: "integer" }).expect(201);
    }
    expect(codeOf(await a.post("/service/fields", { key: "oneTooMany", label: "f", type: "integer" }))).toBe(409006);
    // A definition removed for good no longer counts; another entity has its own budget.
    await a.delete("/service/fields/u0?permanent=true").expect(200);
    await a.post("/service/fields", { key: "oneMore", label: "f", type: "integer" }).expect(201);
    await a.post("/employee/fields", { key: "u0", label: "u", type: "text", unique: true }).expect(201);
  });

  it("concurrent defines of the 100th definition: exactly one wins", async () => {
    const a = admin();
    for (let i = 0; i < CUSTOM_FIELD_LIMITS.perEntity - 1; i++) await a.post("/contact/fields", { key: `f${i}`, label: "f", type: "boolean" }).expect(201);
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => a.post("/contact/fields", { key: `last${i}`, label: "f", type: "boolean" })));
    expect(answers.map((res) => res.status).sort()).toEqual([201, 409, 409, 409]);
    expect((await a.get("/contact/fields").expect(200)).body.data).toHaveLength(CUSTOM_FIELD_LIMITS.perEntity);
  });
}

describe("custom field definitions on PGlite", () => definitionsSuite("pglite"));
describePostgres("custom field definitions on PostgreSQL", () => definitionsSuite("postgres"));
