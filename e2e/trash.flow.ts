// The trash (extensions §E5) through the gateway, with the typed client: a client's delete takes its
// contacts, its restore brings back exactly those (not one deleted before), a webhook receives the
// restored events it lists and nothing it does not, the change feed has them in order, a purge is
// for good and sends nothing, and a key without the delete permission cannot restore.
import { createCrmClient } from "@crm/client";
import { waitFor } from "@crm/testing";
import { startReceiver } from "./harness";

export async function runTrashFlow(baseUrl: string, suffix: string): Promise<void> {
  const signUp = await createCrmClient({ baseUrl }).POST("/api/v1/auth/sign-up", {
    body: { businessName: `Trash ${suffix}`, email: `trash-${suffix}@example.test`, password: "correct-horse-battery" },
  });
  expect(signUp.response.status).toBe(201);
  const api = createCrmClient({ baseUrl, accessToken: signUp.data!.data.accessToken });
  const receiver = await startReceiver(200);
  try {
    // contact.deleted is not listed: its deliveries must not come.
    const hook = await api.POST("/api/v1/webhook", { body: { url: receiver.url, events: ["client.deleted", "client.restored", "contact.restored"] } });
    expect(hook.response.status).toBe(201);
    const feedStart = (await api.GET("/api/v1/events", { params: { query: { types: "client.*,contact.*", perPage: "100" } } })).data!;

    const client = (await api.POST("/api/v1/client", { body: { firstName: "Grace", lastName: "Hopper" } })).data!.data;
    const contact = (value: string) => api.POST("/api/v1/contact", { body: { clientId: client.id, type: "EMAIL", value } });
    const earlier = (await contact("earlier@example.test")).data!.data;
    const taken = [(await contact("a@example.test")).data!.data, (await contact("b@example.test")).data!.data];
    const id = (recordId: string) => ({ params: { path: { id: recordId } } });
    expect((await api.DELETE("/api/v1/contact/{id}", id(earlier.id))).response.status).toBe(200);

    const deleted = await api.DELETE("/api/v1/client/{id}", id(client.id));
    expect(deleted.response.status).toBe(200);
    expect(deleted.data!.data).toMatchObject({ id: client.id, lastName: "Hopper", deletedAt: null });
    expect((await api.GET("/api/v1/client/{id}", id(client.id))).error?.error.code).toBe(404001);
    const trashed = await api.GET("/api/v1/client/{id}", { params: { path: { id: client.id }, query: { deleted: "include" } } });
    expect(trashed.data!.data.deletedAt).toEqual(expect.any(String));
    const trash = await api.GET("/api/v1/contact", { params: { query: { deleted: "only", perPage: 2, orderBy: "value:asc" } } });
    expect(trash.data!.data.map((c) => c.value)).toEqual(["a@example.test", "b@example.test"]);
    const rest = await api.GET("/api/v1/contact", { params: { query: { cursor: trash.data!.meta.nextCursor!, perPage: 2 } } });
    expect(rest.data!.data.map((c) => c.value)).toEqual(["earlier@example.test"]);
    const bad = await api.GET("/api/v1/contact", { params: { query: { deleted: "everything" as never } } });
    expect([bad.response.status, bad.error?.error.code]).toEqual([400, 400001]);
    // A trashed client is an unknown one.
    const orphan = await contact("late@example.test");
    expect([orphan.response.status, orphan.error?.error.code]).toEqual([400, 400001]);
    expect((await api.POST("/api/v1/contact/{id}/restore", id(taken[0]!.id))).error?.error).toEqual({ code: 409008, message: "Related record is deleted" });

    // A key that may read and update clients, not delete them, cannot restore one.
    const key = await api.POST("/api/v1/api-key", { body: { name: "no delete", scopes: ["clients.read", "clients.update"] } });
    const scoped = createCrmClient({ baseUrl, apiKey: key.data!.data.key! });
    expect((await scoped.POST("/api/v1/client/{id}/restore", id(client.id))).error?.error.code).toBe(401014);

    const restored = await api.POST("/api/v1/client/{id}/restore", id(client.id));
    expect(restored.response.status).toBe(200);
    expect(restored.data!.data).toMatchObject({ id: client.id, deletedAt: null });
    expect((await api.POST("/api/v1/client/{id}/restore", id(client.id))).error?.error).toEqual({ code: 409007, message: "Resource is not deleted" });
    const contacts = await api.GET("/api/v1/client/{id}", id(client.id));
    expect(contacts.data!.data.contacts!.map((c) => c.id).sort()).toEqual(taken.map((c) => c.id).sort());

    // Purge: from the trash only, for good, and without an event.
    expect((await api.DELETE("/api/v1/contact/{id}", { params: { path: { id: taken[0]!.id }, query: { permanent: "true" } } })).error?.error.code).toBe(409007);
    const purged = await api.DELETE("/api/v1/contact/{id}", { params: { path: { id: earlier.id }, query: { permanent: "true" } } });
    expect([purged.response.status, purged.data!.data.id]).toEqual([200, earlier.id]);
    expect((await api.GET("/api/v1/contact/{id}", { params: { path: { id: earlier.id }, query: { deleted: "include" } } })).response.status).toBe(404);

    const deliveries = await waitFor(() => (receiver.received.length >= 4 ? receiver.received : undefined), 30_000, 100);
    const bodies = deliveries.map((r) => JSON.parse(r.rawBody) as { event: string; data: { id: string; deletedAt: string | null } });
    expect(bodies.map((b) => b.event)).toEqual(["client.deleted", "client.restored", "contact.restored", "contact.restored"]);
    expect(
      bodies
        .slice(2)
        .map((b) => b.data.id)
        .sort(),
    ).toEqual(taken.map((c) => c.id).sort());
    expect(bodies.every((b) => b.data.deletedAt === null)).toBe(true);

    // The change feed: every delete and restore in commit order; the purge left nothing.
    const feed = await api.GET("/api/v1/events", { params: { query: { after: feedStart.meta.nextCursor, types: "client.*,contact.*", perPage: "100" } } });
    expect(feed.data!.data.map((e) => e.type)).toEqual([
      "client.created",
      "contact.created",
      "contact.created",
      "contact.created",
      "contact.deleted",
      "contact.deleted",
      "contact.deleted",
      "client.deleted",
      "client.restored",
      "contact.restored",
      "contact.restored",
    ]);
    const restoredOnly = await api.GET("/api/v1/events", { params: { query: { after: feedStart.meta.nextCursor, types: "contact.restored" } } });
    expect(restoredOnly.data!.data).toHaveLength(2);
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(receiver.received).toHaveLength(4);
  } finally {
    await receiver.close();
  }
}
