// The change feed (extensions §E6) through the gateway, with the typed client: a sync that reads
// everything, then follows with `wait`, sees each committed change once and in order, and a scoped
// key sees only what it may read.
import { changeFeed, createCrmClient } from "@crm/client";

export async function runChangeFeedFlow(baseUrl: string, suffix: string): Promise<void> {
  const signUp = await createCrmClient({ baseUrl }).POST("/api/v1/auth/sign-up", {
    body: { businessName: `Feed ${suffix}`, email: `feed-${suffix}@example.test`, password: "correct-horse-battery" },
  });
  expect(signUp.response.status).toBe(201);
  const api = createCrmClient({ baseUrl, accessToken: signUp.data!.data.accessToken });
  const client = (await api.POST("/api/v1/client", { body: { firstName: "Ada", lastName: "Lovelace" } })).data!.data;
  await api.PATCH("/api/v1/client/{id}", { params: { path: { id: client.id } }, body: { lastName: "Byron" } });
  await api.POST("/api/v1/product", { body: { name: "Widget" } });

  // Follow from the start: the three events, in order, then the next one as soon as it commits.
  const stop = new AbortController();
  const seen: string[] = [];
  let cursor = "";
  const follower = (async () => {
    try {
      for await (const page of changeFeed(api, { waitSeconds: 10, signal: stop.signal })) {
        seen.push(...page.events.map((e) => e.type));
        cursor = page.cursor;
        if (seen.length >= 4) stop.abort();
      }
    } catch (err) {
      if (!stop.signal.aborted) throw err;
    }
  })();
  for (let i = 0; i < 200 && seen.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  expect(seen).toEqual(["client.created", "client.updated", "product.created"]);
  await api.DELETE("/api/v1/client/{id}", { params: { path: { id: client.id } } });
  await follower;
  expect(seen).toEqual(["client.created", "client.updated", "product.created", "client.deleted"]);

  const after = await api.GET("/api/v1/events", { params: { query: { after: cursor } } });
  expect(after.data).toMatchObject({ success: true, data: [], meta: { hasMore: false } });

  // A key that reads products only sees product events; asking for clients is refused.
  const key = (await api.POST("/api/v1/api-key", { body: { name: "feed", scopes: ["products.read"] } })).data!.data.key;
  const scoped = createCrmClient({ baseUrl, apiKey: key });
  const products = await scoped.GET("/api/v1/events", {});
  expect(products.data!.data.map((e) => e.type)).toEqual(["product.created"]);
  const clients = await scoped.GET("/api/v1/events", { params: { query: { types: "client.*" } } });
  expect([clients.response.status, clients.error?.error.code]).toEqual([401, 401014]);
  const bad = await api.GET("/api/v1/events", { params: { query: { after: "nope" } } });
  expect([bad.response.status, bad.error?.error.code]).toEqual([400, 400019]);
}
