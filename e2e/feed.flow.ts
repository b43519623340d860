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

/** What a sync keeps of a client: the fields the writers change. */
type Kept = { lastName: string; email: string | null };

/**
 * Issue 40's sync: a copy of a business's clients built only from the change feed, read while 10
 * writers create, update and delete clients at once, ends equal to what the API lists: every committed
 * change once and in commit order, deletes included.
 */
export async function runConcurrentFeedSync(baseUrl: string, suffix: string): Promise<void> {
  const signUp = await createCrmClient({ baseUrl }).POST("/api/v1/auth/sign-up", {
    body: { businessName: `Sync ${suffix}`, email: `sync-${suffix}@example.test`, password: "correct-horse-battery" },
  });
  expect(signUp.response.status).toBe(201);
  const api = createCrmClient({ baseUrl, accessToken: signUp.data!.data.accessToken });

  const copy = new Map<string, Kept>();
  let after: string | undefined;
  /** Applies the feed's pages until one is empty; `wait`: how long the last, empty one may wait. */
  const sync = async (wait: number) => {
    for (let page = 0; page < 1_000; page++) {
      const { data, error } = await api.GET("/api/v1/events", { params: { query: { ...(after ? { after } : {}), perPage: "100", wait: String(wait) } } });
      if (error || !data) throw new Error(`feed: ${JSON.stringify(error)}`);
      after = data.meta.nextCursor;
      for (const event of data.data) {
        const client = event.data as { id: string } & Kept;
        if (event.type === "client.deleted") copy.delete(client.id);
        else if (event.type === "client.created" || event.type === "client.updated") copy.set(client.id, { lastName: client.lastName, email: client.email });
      }
      if (data.data.length === 0) return;
    }
    throw new Error("the feed did not end");
  };

  let writing = true;
  const follower = (async () => {
    while (writing) await sync(1);
  })();
  const writer = async (w: number) => {
    for (let i = 0; i < 6; i++) {
      const created = await api.POST("/api/v1/client", { body: { firstName: `W${w}`, lastName: `L${w}-${i}` } });
      expect(created.response.status).toBe(201);
      const id = created.data!.data.id;
      const updated = await api.PATCH("/api/v1/client/{id}", { params: { path: { id } }, body: { lastName: `U${w}-${i}`, email: `w${w}-${i}@example.test` } });
      expect(updated.response.status).toBe(200);
      if (i % 2 === 0) expect((await api.DELETE("/api/v1/client/{id}", { params: { path: { id } } })).response.status).toBe(200);
    }
  };
  await Promise.all(Array.from({ length: 10 }, (_, w) => writer(w)));
  writing = false;
  await follower;
  await sync(0);

  const listed = new Map<string, Kept>();
  let cursor: string | undefined;
  for (let page = 0; page < 100; page++) {
    const { data } = await api.GET("/api/v1/client", { params: { query: { perPage: 100, ...(cursor ? { cursor } : {}) } } });
    for (const client of data!.data) listed.set(client.id, { lastName: client.lastName, email: client.email ?? null });
    cursor = data!.meta.nextCursor ?? undefined;
    if (!cursor) break;
  }
  expect(listed.size).toBe(30);
  expect(new Map([...copy].sort())).toEqual(new Map([...listed].sort()));
}
