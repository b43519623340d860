// Custom fields (extensions §E4) through the gateway, with the typed client: an administrator defines
// a unique externalId, records carry it on create, read, list and in the webhook's delivery, a second
// record cannot take it, a member cannot define fields, another business sees none of it, and an
// archived definition's values disappear from answers until it is brought back.
import { createCrmClient } from "@crm/client";
import { waitFor } from "@crm/testing";
import Ajv2020 from "ajv/dist/2020";
import addFormats from "ajv-formats";
import { startReceiver } from "./harness";

/** What the flow reads of GET /{entity}/schema's JSON Schema. */
type RecordSchema = { properties: { customFields: { properties: object } } };

async function ownerClient(baseUrl: string, suffix: string) {
  const signUp = await createCrmClient({ baseUrl }).POST("/api/v1/auth/sign-up", {
    body: { businessName: `Fields ${suffix}`, email: `fields-${suffix}@example.test`, password: "correct-horse-battery" },
  });
  expect(signUp.response.status).toBe(201);
  return createCrmClient({ baseUrl, accessToken: signUp.data!.data.accessToken });
}

export async function runCustomFieldsFlow(baseUrl: string, suffix: string): Promise<void> {
  const api = await ownerClient(baseUrl, suffix);
  const receiver = await startReceiver(200);
  try {
    const hook = await api.POST("/api/v1/webhook", { body: { url: receiver.url, events: ["client.created", "client.updated"] } });
    expect(hook.response.status).toBe(201);

    const defined = await api.POST("/api/v1/client/fields", { body: { key: "externalId", label: "External id", type: "text", unique: true } });
    expect(defined.response.status).toBe(201);
    expect(defined.data!.data).toMatchObject({ key: "externalId", type: "text", unique: true, isArchived: false });
    await api.POST("/api/v1/client/fields", { body: { key: "tier", label: "Tier", type: "select", options: ["gold", "silver"], defaultValue: "silver" } });
    // `fields` is a literal segment, never a record id.
    const listed = await api.GET("/api/v1/client/fields");
    expect(listed.data!.data.map((d) => d.key)).toEqual(["externalId", "tier"]);

    const created = await api.POST("/api/v1/client", { body: { firstName: "Ada", lastName: "Lovelace", customFields: { externalId: "crm-42" } } });
    expect(created.response.status).toBe(201);
    expect(created.data!.data.customFields).toEqual({ externalId: "crm-42", tier: "silver" });
    const id = created.data!.data.id;
    const read = await api.GET("/api/v1/client/{id}", { params: { path: { id } } });
    expect(read.data!.data.customFields).toEqual({ externalId: "crm-42", tier: "silver" });

    const duplicate = await api.POST("/api/v1/client", { body: { firstName: "Other", lastName: "One", customFields: { externalId: "crm-42" } } });
    expect(duplicate.response.status).toBe(409);
    expect(duplicate.error).toEqual({
      success: false,
      error: { code: 409001, message: "Resource already exists", details: [{ path: "customFields.externalId", message: expect.any(String) }] },
    });
    const badValue = await api.POST("/api/v1/client", { body: { firstName: "Bad", lastName: "One", customFields: { tier: "platinum" } } });
    expect([badValue.response.status, badValue.error?.error.details?.[0]?.path]).toEqual([400, "customFields.tier"]);

    const updated = await api.PATCH("/api/v1/client/{id}", { params: { path: { id } }, body: { customFields: { tier: "gold" } } });
    expect(updated.data!.data.customFields).toEqual({ externalId: "crm-42", tier: "gold" });

    // The deliveries carry the values, and the update names only the custom key it changed.
    const deliveries = await waitFor(() => (receiver.received.length >= 2 ? receiver.received : undefined), 30_000, 100);
    const bodies = deliveries.map((r) => JSON.parse(r.rawBody) as { event: string; data: { customFields: object }; previousAttributes?: object });
    expect(bodies.map((b) => [b.event, b.data.customFields])).toEqual([
      ["client.created", { externalId: "crm-42", tier: "silver" }],
      ["client.updated", { externalId: "crm-42", tier: "gold" }],
    ]);
    expect(bodies[1]!.previousAttributes).toEqual({ customFields: { tier: "silver" } });

    // Archived: gone from answers, kept; brought back unchanged.
    expect((await api.DELETE("/api/v1/client/fields/{key}", { params: { path: { key: "tier" } } })).data!.data.isArchived).toBe(true);
    expect((await api.GET("/api/v1/client/{id}", { params: { path: { id } } })).data!.data.customFields).toEqual({ externalId: "crm-42" });
    // A webhook filter names only keys every subscribed entity defines, archived ones refused (§E1.5, §E4).
    const filtered = (filter: string, events: Array<"client.created" | "product.created"> = ["client.created"]) =>
      api.POST("/api/v1/webhook", { body: { url: receiver.url, events, filter } });
    const refusedFilter = async (answer: ReturnType<typeof filtered>) => {
      const { response, error } = await answer;
      return [response.status, error?.error.code, error?.error.details?.[0]?.path];
    };
    expect(await refusedFilter(filtered("customFields.tier:gold"))).toEqual([400, 400001, "filter"]);
    expect(await refusedFilter(filtered("customFields.nope:x"))).toEqual([400, 400001, "filter"]);
    expect(await refusedFilter(filtered("customFields.externalId:gt:int(3)"))).toEqual([400, 400001, "filter"]);
    await api.PATCH("/api/v1/client/fields/{key}", { params: { path: { key: "tier" } }, body: { isArchived: false } });
    const tierHook = await filtered("customFields.tier:gold");
    expect(tierHook.response.status).toBe(201);
    const widened = await api.PUT("/api/v1/webhook/{id}", { params: { path: { id: tierHook.data!.data.id } }, body: { events: ["client.created", "product.created"] } });
    expect([widened.response.status, widened.error?.error.details?.[0]?.path]).toEqual([400, "filter"]);
    await api.DELETE("/api/v1/webhook/{id}", { params: { path: { id: tierHook.data!.data.id } } });
    expect((await api.GET("/api/v1/client", { params: { query: { perPage: 5 } } })).data!.data[0]!.customFields).toEqual({ externalId: "crm-42", tier: "gold" });

    // The record's JSON Schema, as this business sees it, through the gateway: the answers validate against it.
    const schema = await api.GET("/api/v1/client/schema");
    expect(schema.response.status).toBe(200);
    const customSchema = (schema.data!.data as unknown as RecordSchema).properties.customFields;
    expect(Object.keys(customSchema.properties)).toEqual(["externalId", "tier"]);
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true, allErrors: true });
    addFormats(ajv);
    const validate = ajv.compile(schema.data!.data);
    const answers = [(await api.GET("/api/v1/client/{id}", { params: { path: { id } } })).data!.data, ...(await api.GET("/api/v1/client")).data!.data];
    expect(answers.filter((record) => !validate(record)).map(() => validate.errors)).toEqual([]);

    // Field selection names custom keys (extensions §E8).
    const selected = await api.GET("/api/v1/client/{id}", { params: { path: { id }, query: { fields: "customFields.tier" } } });
    expect(selected.data!.data).toEqual({ id, customFields: { tier: "gold" } });

    // A member reads definitions but cannot write them; another business has none.
    const member = await api.POST("/api/v1/user", { body: { email: `fields-member-${suffix}@example.test`, password: "correct-horse-battery", role: "MEMBER" } });
    expect(member.response.status).toBe(201);
    const signIn = await createCrmClient({ baseUrl }).POST("/api/v1/auth/sign-in", { body: { email: `fields-member-${suffix}@example.test`, password: "correct-horse-battery" } });
    const asMember = createCrmClient({ baseUrl, accessToken: signIn.data!.data.accessToken });
    expect((await asMember.GET("/api/v1/client/fields")).data!.data).toHaveLength(2);
    const refused = await asMember.POST("/api/v1/client/fields", { body: { key: "other", label: "Other", type: "text" } });
    expect([refused.response.status, refused.error?.error.code]).toEqual([401, 401014]);
    const stranger = await ownerClient(baseUrl, `${suffix}-other`);
    expect((await stranger.GET("/api/v1/client/fields")).data!.data).toEqual([]);
    const strangersSchema = (await stranger.GET("/api/v1/client/schema")).data!.data as unknown as RecordSchema;
    expect(strangersSchema.properties.customFields.properties).toEqual({});
    const strangers = await stranger.POST("/api/v1/client", { body: { firstName: "S", lastName: "T", customFields: { externalId: "crm-42" } } });
    expect([strangers.response.status, strangers.error?.error.details?.[0]?.path]).toEqual([400, "customFields.externalId"]);
  } finally {
    await receiver.close();
  }
}
