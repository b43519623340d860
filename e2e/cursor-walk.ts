// Cursor pagination (extensions §E2.1) through the gateway, with the typed client: a walk over a
// business's clients while other requests create, update and delete clients at the same time sees
// every client that exists throughout exactly once, ends, and a changed or foreign cursor is 400019.
import { createCrmClient, type CrmClient } from "@crm/client";
import { OpenApiResponseValidator } from "./openapi-validator";
import { validatingFetch } from "./flow";

async function owner(baseUrl: string, suffix: string, fetchAndValidate: (request: Request) => Promise<Response>): Promise<CrmClient> {
  const anonymous = createCrmClient({ baseUrl, fetch: fetchAndValidate });
  const email = `cursor-${suffix}@example.test`;
  const password = "correct-horse-battery";
  const signUp = await anonymous.POST("/api/v1/auth/sign-up", { body: { businessName: `Cursor ${suffix}`, email, password, firstName: "Ada", lastName: "Owner" } });
  if (signUp.response.status !== 201) throw new Error(`sign-up failed: ${signUp.response.status} ${JSON.stringify(signUp.error)}`);
  const signIn = await anonymous.POST("/api/v1/auth/sign-in", { body: { email, password } });
  return createCrmClient({ baseUrl, accessToken: signIn.data!.data.accessToken, fetch: fetchAndValidate });
}

async function createClients(api: CrmClient, prefix: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api.POST("/api/v1/client", { body: { firstName: `${prefix}${i}`, lastName: i % 2 ? "Odd" : "Even" } });
    if (res.response.status !== 201) throw new Error(`create failed: ${res.response.status}`);
    ids.push(res.data!.data.id);
  }
  return ids;
}

export async function runCursorWalk(baseUrl: string, suffix: string): Promise<void> {
  const doc = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
  const undocumented: string[] = [];
  const fetchAndValidate = validatingFetch(new OpenApiResponseValidator(doc), undocumented);
  const api = await owner(baseUrl, suffix, fetchAndValidate);
  // The gateway's default rate limit (50 requests a minute per caller) bounds the sizes here.
  const stable = await createClients(api, "Stable", 10);
  const doomed = await createClients(api, "Doomed", 3);

  // Writers run beside the walk, not between its pages: creates, edits and deletes in flight while pages are read.
  let walking = true;
  const writers = (async () => {
    let i = 0;
    while (walking && i < doomed.length) {
      const victim = doomed[i];
      await Promise.all([
        api.POST("/api/v1/client", { body: { firstName: `New${i}`, lastName: "Even" } }),
        api.PATCH("/api/v1/client/{id}", { params: { path: { id: stable[i % stable.length]! } }, body: { notes: `edit ${i}` } }),
        victim ? api.DELETE("/api/v1/client/{id}", { params: { path: { id: victim } } }) : Promise.resolve(),
      ]);
      i += 1;
    }
  })();

  const seen: string[] = [];
  try {
    let page = await api.GET("/api/v1/client", { params: { query: { perPage: 2, include: "-contacts" } } });
    for (let n = 0; ; n++) {
      expect(page.response.status).toBe(200);
      seen.push(...page.data!.data.map((client) => client.id));
      const next = page.data!.meta.nextCursor;
      if (next === null || n > 20) break;
      page = await api.GET("/api/v1/client", { params: { query: { cursor: next, perPage: 2, include: "-contacts" } } });
      expect(Object.keys(page.data?.meta ?? {}).sort()).toEqual(["nextCursor", "perPage"]);
    }
  } finally {
    walking = false;
    await writers;
  }
  expect(seen.length).toBe(new Set(seen).size);
  for (const id of stable) expect([id, seen.filter((s) => s === id).length]).toEqual([id, 1]);

  const first = await api.GET("/api/v1/client", { params: { query: { perPage: 2, where: "lastName:Odd" } } });
  const cursor = first.data!.meta.nextCursor!;
  const other = await owner(baseUrl, `${suffix}-other`, fetchAndValidate);
  await createClients(other, "Other", 2);
  const foreign = (await other.GET("/api/v1/client", { params: { query: { perPage: 1 } } })).data!.meta.nextCursor!;
  for (const bad of [`${cursor}x`, `${cursor.slice(0, 5)}${cursor[5] === "a" ? "b" : "a"}${cursor.slice(6)}`, foreign, "page-two"]) {
    const res = await api.GET("/api/v1/client", { params: { query: { cursor: bad } } });
    expect([res.response.status, res.error?.error.code]).toEqual([400, 400019]);
  }
  const mixed = await api.GET("/api/v1/client", { params: { query: { cursor, where: "lastName:Even" } } });
  expect([mixed.response.status, mixed.error?.error.code]).toEqual([400, 400001]);
  expect(undocumented).toEqual([]);
}
