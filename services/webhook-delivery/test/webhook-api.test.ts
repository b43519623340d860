// The webhooks API over HTTP (interface §2-§4, decisions §6-§8): every endpoint's happy path, every
// error it documents, tenancy and permissions, on PGlite and on PostgreSQL.
import { allPermissions, eventCatalogue, uuidv7 } from "@crm/contracts";
import { api, databaseModes, principal, setUpDelivery } from "./support/harness";

const ERRORS = {
  validation: { code: 400001, message: "Validation failed" },
  malformed: { code: 400002, message: "Malformed JSON body" },
  forbidden: { code: 401014, message: "Insufficient permissions for this action" },
  notFound: { code: 404001, message: "Resource not found" },
  notRetryable: { code: 409004, message: "Delivery is not in a retryable state" },
};

describe.each(databaseModes)("webhooks API on %s", (mode) => {
  const setup = setUpDelivery(mode);
  const businessA = uuidv7();
  const businessB = uuidv7();
  const owner = principal(businessA);
  const other = principal(businessB);
  const a = () => api(setup.service, owner);

  async function createWebhook(body: object = {}) {
    const res = await a().post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"], ...body });
    expect(res.status).toBe(201);
    return res.body.data as { id: string; secret: string; secretPrefix: string };
  }

  describe("POST /api/v1/webhook", () => {
    it("creates a webhook and shows its secret once", async () => {
      const res = await a()
        .post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created", "invoice.updated"], description: "CRM sync" })
        .expect(201);
      expect(res.body.success).toBe(true);
      const hook = res.body.data;
      expect(hook).toMatchObject({
        url: setup.receiver.url,
        events: ["client.created", "invoice.updated"],
        description: "CRM sync",
        isActive: true,
        businessId: businessA,
      });
      expect(hook.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(hook.secret.slice(6), "base64")).toHaveLength(32);
      expect(hook.secretPrefix).toBe(hook.secret.slice(0, 12));
      expect(new Date(hook.createdAt).toISOString()).toBe(hook.createdAt);
    });

    it("defaults description to the empty string, accepts https: and drops repeated events", async () => {
      const res = await a()
        .post("/api/v1/webhook", { url: "https://example.com/hook", events: ["client.created", "client.created"] })
        .expect(201);
      expect(res.body.data).toMatchObject({ description: "", url: "https://example.com/hook", events: ["client.created"] });
    });

    it("accepts every one of the 28 event names", async () => {
      const res = await a()
        .post("/api/v1/webhook", { url: setup.receiver.url, events: [...eventCatalogue] })
        .expect(201);
      expect(res.body.data.events).toHaveLength(28);
    });

    it.each([
      ["no body", undefined, "url"],
      ["url missing", { events: ["client.created"] }, "url"],
      ["url not a string", { url: 42, events: ["client.created"] }, "url"],
      ["relative url", { url: "/hook", events: ["client.created"] }, "url"],
      ["ftp url", { url: "ftp://example.com/x", events: ["client.created"] }, "url"],
      ["events missing", { url: "https://example.com" }, "events"],
      ["events empty", { url: "https://example.com", events: [] }, "events"],
      ["events not an array", { url: "https://example.com", events: "client.created" }, "events"],
      ["unknown event name", { url: "https://example.com", events: ["client.created", "client.exploded"] }, "events.1"],
      ["description not a string", { url: "https://example.com", events: ["client.created"], description: 5 }, "description"],
      ["unknown field", { url: "https://example.com", events: ["client.created"], secret: "whsec_mine" }, "secret"],
    ])("answers 400001 for %s", async (_name, body, path) => {
      const res = await a().post("/api/v1/webhook", body).expect(400);
      expect(res.body).toMatchObject({ success: false, error: ERRORS.validation });
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    });

    it("answers 400002 for malformed JSON", async () => {
      const res = await a().post("/api/v1/webhook").set("content-type", "application/json").send('{"url":').expect(400);
      expect(res.body).toEqual({ success: false, error: ERRORS.malformed });
    });

    it("needs webhooks.create: 401014 otherwise", async () => {
      const member = principal(
        businessA,
        allPermissions.filter((p) => p !== "webhooks.create"),
      );
      const res = await api(setup.service, member)
        .post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"] })
        .expect(401);
      expect(res.body).toEqual({ success: false, error: ERRORS.forbidden });
    });
  });

  describe("GET /api/v1/webhook and /api/v1/webhook/{id}", () => {
    it("lists the caller's webhooks newest first, paginated, never with a secret", async () => {
      const business = uuidv7();
      const who = principal(business);
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const res = await api(setup.service, who)
          .post("/api/v1/webhook", { url: setup.receiver.url, events: ["client.created"], description: `n${i}` })
          .expect(201);
        ids.push(res.body.data.id);
      }
      const page1 = await api(setup.service, who).get("/api/v1/webhook?perPage=2").expect(200);
      expect(page1.body.meta).toEqual({ total: 3, lastPage: 2, currentPage: 1, perPage: 2, prev: null, next: 2 });
      expect(page1.body.data.map((h: { id: string }) => h.id)).toEqual([ids[2], ids[1]]);
      const page2 = await api(setup.service, who).get("/api/v1/webhook?page=2&perPage=2").expect(200);
      expect(page2.body.meta).toEqual({ total: 3, lastPage: 2, currentPage: 2, perPage: 2, prev: 1, next: null });
      expect(page2.body.data.map((h: { id: string }) => h.id)).toEqual([ids[0]]);
      for (const hook of [...page1.body.data, ...page2.body.data]) {
        expect(hook).not.toHaveProperty("secret");
        expect(hook.secretPrefix).toMatch(/^whsec_/);
      }
      const empty = await api(setup.service, principal(uuidv7())).get("/api/v1/webhook").expect(200);
      expect(empty.body).toEqual({ success: true, data: [], meta: { total: 0, lastPage: 0, currentPage: 1, perPage: 10, prev: null, next: null } });
    });

    it("answers 400001 for a bad page or perPage", async () => {
      for (const q of ["page=0", "page=x", "perPage=0", "perPage=1.5"]) {
        const res = await a().get(`/api/v1/webhook?${q}`).expect(400);
        expect(res.body.error).toMatchObject(ERRORS.validation);
      }
    });

    it("reads one webhook without its secret", async () => {
      const created = await createWebhook({ description: "one" });
      const res = await a().get(`/api/v1/webhook/${created.id}`).expect(200);
      expect(res.body.data).toMatchObject({ id: created.id, description: "one", secretPrefix: created.secretPrefix });
      expect(res.body.data).not.toHaveProperty("secret");
      expect(JSON.stringify(res.body)).not.toContain(created.secret);
    });

    it("answers 404001 for an unknown id, a non-UUID id and another business's webhook", async () => {
      const created = await createWebhook();
      for (const [who, id] of [
        [owner, uuidv7()],
        [owner, "not-a-uuid"],
        [other, created.id],
      ] as const) {
        const res = await api(setup.service, who).get(`/api/v1/webhook/${id}`).expect(404);
        expect(res.body).toEqual({ success: false, error: ERRORS.notFound });
      }
      const list = await api(setup.service, other).get("/api/v1/webhook").expect(200);
      expect(list.body.data.map((h: { id: string }) => h.id)).not.toContain(created.id);
    });

    it("needs webhooks.read", async () => {
      const created = await createWebhook();
      const none = principal(businessA, []);
      await api(setup.service, none).get("/api/v1/webhook").expect(401);
      const res = await api(setup.service, none).get(`/api/v1/webhook/${created.id}`).expect(401);
      expect(res.body.error).toEqual(ERRORS.forbidden);
    });
  });

  describe("PUT /api/v1/webhook/{id}", () => {
    it("changes any of events, isActive, url and description and answers with the webhook", async () => {
      const created = await createWebhook({ description: "before" });
      const res = await a()
        .put(`/api/v1/webhook/${created.id}`, { events: ["invoice.created", "quote.deleted"], isActive: false, url: "https://example.org/x", description: "after" })
        .expect(200);
      expect(res.body.data).toMatchObject({ id: created.id, events: ["invoice.created", "quote.deleted"], isActive: false, url: "https://example.org/x", description: "after" });
      expect(res.body.data).not.toHaveProperty("secret");
      const partial = await a().put(`/api/v1/webhook/${created.id}`, { isActive: true }).expect(200);
      expect(partial.body.data).toMatchObject({ isActive: true, description: "after", events: ["invoice.created", "quote.deleted"] });
      const read = await a().get(`/api/v1/webhook/${created.id}`).expect(200);
      expect(read.body.data).toMatchObject({ isActive: true, url: "https://example.org/x" });
    });

    it("answers 200 with the webhook unchanged for a PUT that changes nothing", async () => {
      const created = await createWebhook({ description: "kept" });
      const before = (await a().get(`/api/v1/webhook/${created.id}`).expect(200)).body.data;
      // decisions §6: "PUT /api/v1/webhook/{id}: 200 with the webhook", also when the body names no change.
      expect((await a().put(`/api/v1/webhook/${created.id}`, {}).expect(200)).body.data).toEqual(before);
      expect((await a().put(`/api/v1/webhook/${created.id}`, { url: before.url }).expect(200)).body.data).toMatchObject({ id: created.id, description: "kept" });
      await api(setup.service, other).put(`/api/v1/webhook/${created.id}`, {}).expect(404);
    });

    it.each([
      ["empty events", { events: [] }, "events"],
      ["unknown event", { events: ["nope.created"] }, "events.0"],
      ["isActive not boolean", { isActive: "yes" }, "isActive"],
      ["bad url", { url: "not a url" }, "url"],
      ["unknown field", { secret: "x" }, "secret"],
    ])("answers 400001 for %s", async (_name, body, path) => {
      const created = await createWebhook();
      const res = await a().put(`/api/v1/webhook/${created.id}`, body).expect(400);
      expect(res.body.error).toMatchObject(ERRORS.validation);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    });

    it("answers 404001 for another business's webhook and leaves it unchanged; 401014 without webhooks.update", async () => {
      const created = await createWebhook();
      await api(setup.service, other).put(`/api/v1/webhook/${created.id}`, { isActive: false }).expect(404);
      await api(setup.service, principal(businessA, ["webhooks.read"]))
        .put(`/api/v1/webhook/${created.id}`, { isActive: false })
        .expect(401);
      const read = await a().get(`/api/v1/webhook/${created.id}`).expect(200);
      expect(read.body.data.isActive).toBe(true);
    });
  });

  describe("basic-auth credentials in the URL", () => {
    it("are never shown: the password reads ****, in every response, and a PUT of the shown URL keeps them", async () => {
      const url = "https://alice:hunter2@example.com/hooks?x=1";
      const shown = "https://alice:****@example.com/hooks?x=1";
      const created = await a()
        .post("/api/v1/webhook", { url, events: ["client.created"] })
        .expect(201);
      const id = created.body.data.id as string;
      const responses = [
        created,
        await a().get(`/api/v1/webhook/${id}`).expect(200),
        await a().post(`/api/v1/webhook/${id}/rotate-secret`).expect(200),
        await a().put(`/api/v1/webhook/${id}`, { url: shown, description: "round trip" }).expect(200),
        await api(setup.service, principal(businessA, ["webhooks.read"]))
          .get(`/api/v1/webhook/${id}`)
          .expect(200),
        await a().delete(`/api/v1/webhook/${id}`).expect(200),
      ];
      for (const res of responses) {
        expect(res.body.data.url).toBe(shown);
        expect(JSON.stringify(res.body)).not.toContain("hunter2");
      }
      const list = await a().get("/api/v1/webhook?perPage=100").expect(200);
      expect(list.body.data.find((w: { id: string }) => w.id === id).url).toBe(shown);
      expect(JSON.stringify(list.body)).not.toContain("hunter2");
      const stored = await setup.service.prisma.webhook.findUniqueOrThrow({ where: { id } });
      expect(stored.url).toBe(url);

      const token = await a()
        .post("/api/v1/webhook", { url: "https://tok3n@example.com/h", events: ["client.created"] })
        .expect(201);
      expect(token.body.data.url).toBe("https://****@example.com/h");
      const replaced = await a().put(`/api/v1/webhook/${id}`, { url: "https://bob:new@example.com/x" }).expect(200);
      expect(replaced.body.data.url).toBe("https://bob:****@example.com/x");
      expect((await setup.service.prisma.webhook.findUniqueOrThrow({ where: { id } })).url).toBe("https://bob:new@example.com/x");
    });
  });

  describe("DELETE /api/v1/webhook/{id}", () => {
    it("deactivates and keeps the record; twice is fine", async () => {
      const created = await createWebhook();
      const res = await a().delete(`/api/v1/webhook/${created.id}`).expect(200);
      expect(res.body.data).toMatchObject({ id: created.id, isActive: false });
      expect(res.body.data).not.toHaveProperty("secret");
      await a().delete(`/api/v1/webhook/${created.id}`).expect(200);
      const read = await a().get(`/api/v1/webhook/${created.id}`).expect(200);
      expect(read.body.data.isActive).toBe(false);
    });

    it("answers 404001 for another business's webhook, 401014 without webhooks.delete", async () => {
      const created = await createWebhook();
      const res = await api(setup.service, other).delete(`/api/v1/webhook/${created.id}`).expect(404);
      expect(res.body.error).toEqual(ERRORS.notFound);
      await api(setup.service, principal(businessA, ["webhooks.read", "webhooks.update"]))
        .delete(`/api/v1/webhook/${created.id}`)
        .expect(401);
      expect((await a().get(`/api/v1/webhook/${created.id}`)).body.data.isActive).toBe(true);
    });
  });

  describe("POST /api/v1/webhook/{id}/test", () => {
    it("creates a PENDING webhook.test record and makes no HTTP call", async () => {
      const created = await createWebhook();
      const before = setup.receiver.requests.length;
      const res = await a().post(`/api/v1/webhook/${created.id}/test`).expect(201);
      expect(res.body.data).toMatchObject({ event: "webhook.test", status: "PENDING", attempt: 0, nextRetryAt: null, responseStatus: null, responseBody: null });
      const list = await a().get(`/api/v1/webhook/${created.id}/deliveries`).expect(200);
      expect(list.body.data[0]).toMatchObject({ id: res.body.data.id, status: "PENDING" });
      // A retry cycle finds nothing due: a test record is never sent.
      await setup.service.retries.runOnce();
      await new Promise((r) => setTimeout(r, 200));
      expect(setup.receiver.requests.length).toBe(before);
      expect((await a().get(`/api/v1/webhook/${created.id}/deliveries`)).body.data[0]).toMatchObject({ status: "PENDING", attempt: 0 });
    });

    it("answers 404001 for another business's webhook", async () => {
      const created = await createWebhook();
      const res = await api(setup.service, other).post(`/api/v1/webhook/${created.id}/test`).expect(404);
      expect(res.body.error).toEqual(ERRORS.notFound);
    });
  });

  describe("POST /api/v1/webhook/{id}/rotate-secret", () => {
    it("returns a new secret once; later reads show only the new prefix", async () => {
      const created = await createWebhook();
      const res = await a().post(`/api/v1/webhook/${created.id}/rotate-secret`).expect(200);
      expect(res.body.data.secret).toMatch(/^whsec_/);
      expect(res.body.data.secret).not.toBe(created.secret);
      expect(res.body.data.secretPrefix).toBe(res.body.data.secret.slice(0, 12));
      const read = await a().get(`/api/v1/webhook/${created.id}`).expect(200);
      expect(read.body.data.secretPrefix).toBe(res.body.data.secretPrefix);
      expect(read.body.data).not.toHaveProperty("secret");
    });

    it("answers 404001 for another business's webhook and 401014 without webhooks.update", async () => {
      const created = await createWebhook();
      await api(setup.service, other).post(`/api/v1/webhook/${created.id}/rotate-secret`).expect(404);
      await api(setup.service, principal(businessA, ["webhooks.read"]))
        .post(`/api/v1/webhook/${created.id}/rotate-secret`)
        .expect(401);
    });
  });

  describe("GET /api/v1/webhook/{id}/deliveries", () => {
    it("lists newest first with the documented fields and meta", async () => {
      const created = await createWebhook();
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await a().post(`/api/v1/webhook/${created.id}/test`).expect(201)).body.data.id);
      const res = await a().get(`/api/v1/webhook/${created.id}/deliveries?perPage=2`).expect(200);
      expect(res.body.meta).toEqual({ total: 3, lastPage: 2, currentPage: 1, perPage: 2, prev: null, next: 2 });
      expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([ids[2], ids[1]]);
      for (const key of ["id", "event", "status", "responseStatus", "responseBody", "attempt", "nextRetryAt", "createdAt"]) {
        expect(res.body.data[0]).toHaveProperty(key);
      }
      const page2 = await a().get(`/api/v1/webhook/${created.id}/deliveries?page=2&perPage=2`).expect(200);
      expect(page2.body.data.map((d: { id: string }) => d.id)).toEqual([ids[0]]);
    });

    it("answers 404001 for another business's webhook, 400001 for a bad page", async () => {
      const created = await createWebhook();
      await a().post(`/api/v1/webhook/${created.id}/test`).expect(201);
      const res = await api(setup.service, other).get(`/api/v1/webhook/${created.id}/deliveries`).expect(404);
      expect(res.body.error).toEqual(ERRORS.notFound);
      await a().get(`/api/v1/webhook/${created.id}/deliveries?page=-1`).expect(400);
    });
  });

  describe("POST /api/v1/webhook/{id}/deliveries/{deliveryId}/retry", () => {
    it("answers 409004 for a delivery that is not FAILED", async () => {
      const created = await createWebhook();
      const test = (await a().post(`/api/v1/webhook/${created.id}/test`).expect(201)).body.data;
      const res = await a().post(`/api/v1/webhook/${created.id}/deliveries/${test.id}/retry`).expect(409);
      expect(res.body).toEqual({ success: false, error: ERRORS.notRetryable });
    });

    it("answers 404001 for an unknown delivery, one of another webhook, and another business's", async () => {
      const one = await createWebhook();
      const two = await createWebhook();
      const test = (await a().post(`/api/v1/webhook/${one.id}/test`).expect(201)).body.data;
      await a().post(`/api/v1/webhook/${one.id}/deliveries/${uuidv7()}/retry`).expect(404);
      await a().post(`/api/v1/webhook/${one.id}/deliveries/nope/retry`).expect(404);
      await a().post(`/api/v1/webhook/${two.id}/deliveries/${test.id}/retry`).expect(404);
      const res = await api(setup.service, other).post(`/api/v1/webhook/${one.id}/deliveries/${test.id}/retry`).expect(404);
      expect(res.body.error).toEqual(ERRORS.notFound);
      await api(setup.service, principal(businessA, ["webhooks.read"]))
        .post(`/api/v1/webhook/${one.id}/deliveries/${test.id}/retry`)
        .expect(401);
    });
  });

  it("is ready when the database and the bus are", async () => {
    const res = await fetch(`${setup.service.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", checks: { database: "ok", bus: "ok" } });
  });

  it("answers 401000 without an internal token", async () => {
    const res = await fetch(`${setup.service.url}/api/v1/webhook`);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { error: { code: number } }).error.code).toBe(401000);
  });

  it("answers 404000 for unknown routes", async () => {
    const res = await a().get("/api/v1/webhook/x/y/z").expect(404);
    expect(res.body.error.code).toBe(404000);
  });
});
