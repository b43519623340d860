// Extensions §E2 through the gateway, with the typed client: conditional requests (ETag,
// If-None-Match, If-Match). Deliveries prove what the events were: events of one business arrive in
// order, so a refused write that had emitted anyway would show up before the accepted one.
import { createCrmClient } from "@crm/client";
import { waitFor } from "@crm/testing";
import { startReceiver } from "./harness";

async function ownerClient(baseUrl: string, suffix: string) {
  const signUp = await createCrmClient({ baseUrl }).POST("/api/v1/auth/sign-up", {
    body: { businessName: `Records ${suffix}`, email: `records-${suffix}@example.test`, password: "correct-horse-battery" },
  });
  expect(signUp.response.status).toBe(201);
  return createCrmClient({ baseUrl, accessToken: signUp.data!.data.accessToken });
}

export async function runConditionalRequestFlow(baseUrl: string, suffix: string): Promise<void> {
  const api = await ownerClient(baseUrl, `etag-${suffix}`);
  const receiver = await startReceiver(200);
  try {
    const hook = await api.POST("/api/v1/webhook", { body: { url: receiver.url, events: ["client.updated", "client.deleted"] } });
    expect(hook.response.status).toBe(201);

    const created = await api.POST("/api/v1/client", { body: { firstName: "Ada", lastName: "Lovelace", notes: "v1" } });
    expect(created.response.status).toBe(201);
    const id = created.data!.data.id;
    const path = { params: { path: { id } } };
    const read = await api.GET("/api/v1/client/{id}", path);
    const v1 = read.response.headers.get("etag")!;
    expect(v1).toMatch(/^"[^"]+"$/);
    expect(created.response.headers.get("etag")).toBe(v1);

    const notModified = await api.GET("/api/v1/client/{id}", { params: { path: { id }, header: { "If-None-Match": v1 } } });
    expect(notModified.response.status).toBe(304);
    expect(notModified.response.headers.get("etag")).toBe(v1);

    // A lost update refused: nothing changes, no event.
    const stale = await api.PATCH("/api/v1/client/{id}", { params: { path: { id }, header: { "If-Match": '"stale"' } }, body: { notes: "lost" } });
    expect(stale.response.status).toBe(412);
    expect(stale.error).toEqual({ success: false, error: { code: 412000, message: "Precondition failed" } });
    const updated = await api.PATCH("/api/v1/client/{id}", { params: { path: { id }, header: { "If-Match": v1 } }, body: { notes: "v2" } });
    expect(updated.response.status).toBe(200);
    const v2 = updated.response.headers.get("etag")!;
    expect(v2).not.toBe(v1);
    const changed = await api.GET("/api/v1/client/{id}", { params: { path: { id }, header: { "If-None-Match": v1 } } });
    expect(changed.response.status).toBe(200);
    expect(changed.data!.data.notes).toBe("v2");
    expect(changed.response.headers.get("etag")).toBe(v2);

    const staleDelete = await api.DELETE("/api/v1/client/{id}", { params: { path: { id }, header: { "If-Match": v1 } } });
    expect([staleDelete.response.status, staleDelete.error?.error.code]).toEqual([412, 412000]);
    const deleted = await api.DELETE("/api/v1/client/{id}", { params: { path: { id }, header: { "If-Match": v2 } } });
    expect(deleted.response.status).toBe(200);
    expect(deleted.response.headers.get("etag")).toBe(v2);

    const events = await waitFor(() => (receiver.received.length >= 2 ? receiver.received : undefined), 30_000, 100);
    const bodies = events.map((r) => JSON.parse(r.rawBody) as { event: string; data: { notes: string } });
    expect(bodies.map((b) => [b.event, b.data.notes])).toEqual([
      ["client.updated", "v2"],
      ["client.deleted", "v2"],
    ]);
  } finally {
    await receiver.close();
  }
}

/** Batch create (extensions §E2.2): all or nothing, an event per record in order, Idempotency-Key. */
export async function runBatchCreateFlow(baseUrl: string, suffix: string): Promise<void> {
  const api = await ownerClient(baseUrl, `batch-${suffix}`);
  const receiver = await startReceiver(200);
  try {
    const hook = await api.POST("/api/v1/webhook", { body: { url: receiver.url, events: ["client.created"] } });
    expect(hook.response.status).toBe(201);

    // One bad item: nothing is created and nothing is emitted.
    const refused = await api.POST("/api/v1/client/batch", {
      body: { items: [{ firstName: "Ok", lastName: "First" }, { firstName: "No last name" } as never, { firstName: "Ok", lastName: "Third" }] },
    });
    expect(refused.response.status).toBe(400);
    expect(refused.error?.error).toMatchObject({ code: 400001, details: [{ path: "items.1.lastName" }] });

    const items = ["Ada", "Grace", "Katherine"].map((firstName) => ({ firstName, lastName: "Batch" }));
    const headers = { "Idempotency-Key": `batch-${suffix}` };
    const created = await api.POST("/api/v1/client/batch", { body: { items }, headers });
    expect(created.response.status).toBe(201);
    expect(created.data!.data.map((c) => c.firstName)).toEqual(["Ada", "Grace", "Katherine"]);
    const replay = await api.POST("/api/v1/client/batch", { body: { items }, headers });
    expect(replay.response.status).toBe(201);
    expect(replay.response.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.data!.data.map((c) => c.id)).toEqual(created.data!.data.map((c) => c.id));
    const list = await api.GET("/api/v1/client", {});
    expect(list.data!.meta).toMatchObject({ total: 3 });

    // Events of one business arrive in order: had the refused batch emitted, its events would come first.
    const received = await waitFor(() => (receiver.received.length >= 3 ? receiver.received : undefined), 30_000, 100);
    const bodies = received.map((r) => JSON.parse(r.rawBody) as { event: string; data: { id: string } });
    expect(bodies.map((b) => [b.event, b.data.id])).toEqual(created.data!.data.map((c) => ["client.created", c.id]));
  } finally {
    await receiver.close();
  }
}

/** Extensions §E8 through the gateway: `fields` on one record, a list and a cursor page; strict names; the ETag unchanged. */
export async function runFieldSelectionFlow(baseUrl: string, suffix: string): Promise<void> {
  const api = await ownerClient(baseUrl, `fields-${suffix}`);
  const created = await api.POST("/api/v1/client", { body: { firstName: "Ada", lastName: "Lovelace", email: "ada@example.test" } });
  expect(created.response.status).toBe(201);
  const id = created.data!.data.id;
  const contact = await api.POST("/api/v1/contact", { body: { clientId: id, type: "EMAIL", value: "ada@example.test" } });
  expect(contact.response.status).toBe(201);
  await api.POST("/api/v1/client", { body: { firstName: "Grace", lastName: "Hopper" } });

  const whole = await api.GET("/api/v1/client/{id}", { params: { path: { id } } });
  const selected = await api.GET("/api/v1/client/{id}", { params: { path: { id }, query: { fields: "lastName,contacts.value" } } });
  expect(selected.response.status).toBe(200);
  expect(selected.data!.data).toEqual({ id, lastName: "Lovelace", contacts: [{ id: contact.data!.data.id, value: "ada@example.test" }] });
  expect(selected.response.headers.get("etag")).toBe(whole.response.headers.get("etag"));

  const page = await api.GET("/api/v1/client", { params: { query: { perPage: 1, fields: "firstName" } } });
  expect(page.data!.data).toEqual([{ id: expect.any(String), firstName: "Grace" }]);
  const next = await api.GET("/api/v1/client", { params: { query: { perPage: 1, fields: "firstName", cursor: page.data!.meta.nextCursor! } } });
  expect(next.data!.data).toEqual([{ id, firstName: "Ada" }]);

  for (const fields of ["", "nope", "invoices.number", "customFields.tier"]) {
    const refused = await api.GET("/api/v1/client", { params: { query: { fields } } });
    expect([fields, refused.response.status, refused.error?.error.code, refused.error?.error.details?.[0]?.path]).toEqual([fields, 400, 400019, "fields"]);
  }
}
