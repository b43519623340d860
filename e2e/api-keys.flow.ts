// Extensions §E3 through the gateway(s), with the typed client: lastUsedAt without a write per
// request, and rolling a key with an overlap after which the old key answers 401020 on every
// gateway sharing the store (none may go on accepting it from a cache).
import { createCrmClient, type CrmClient } from "@crm/client";
import { waitFor } from "@crm/testing";

interface KeyStatus {
  status: number;
  code?: number;
  /** When the answer arrived (epoch ms). */
  at: number;
}

async function useKey(baseUrl: string, key: string): Promise<KeyStatus> {
  const res = await fetch(`${baseUrl}/api/v1/client?perPage=1`, { headers: { "x-api-key": key } });
  const body = (await res.json()) as { error?: { code: number } };
  return { status: res.status, code: body.error?.code, at: Date.now() };
}

async function expectAccepted(gateways: readonly string[], key: string): Promise<void> {
  for (const url of gateways) expect(await useKey(url, key)).toMatchObject({ status: 200 });
}

async function expectExpired(gateways: readonly string[], key: string): Promise<void> {
  for (const url of gateways) expect(await useKey(url, key)).toMatchObject({ status: 401, code: 401020 });
}

async function roll(api: CrmClient, id: string, expiresInSeconds?: number) {
  const res = await api.POST("/api/v1/api-key/{id}/roll", {
    params: { path: { id } },
    ...(expiresInSeconds === undefined ? {} : { body: { expiresInSeconds } }),
  });
  return res;
}

/**
 * `gateways`: base URLs of every gateway instance sharing one store (one in embedded mode).
 * Needs API_KEY_USAGE_FLUSH_MS short (the e2e runs set 200 ms).
 */
export async function runApiKeyFlow(gateways: readonly string[], suffix: string): Promise<void> {
  const [baseUrl] = gateways as [string];
  const anonymous = createCrmClient({ baseUrl });
  const signUp = await anonymous.POST("/api/v1/auth/sign-up", {
    body: { businessName: `Keys ${suffix}`, email: `keys-${suffix}@example.test`, password: "correct-horse-battery" },
  });
  expect(signUp.response.status).toBe(201);
  const api = createCrmClient({ baseUrl, accessToken: signUp.data!.data.accessToken });

  // lastUsedAt: null until used, then set (within the flush interval), never in the future.
  const created = await api.POST("/api/v1/api-key", { body: { name: "sync", scopes: ["clients.read"] } });
  expect(created.response.status).toBe(201);
  const first = created.data!.data;
  expect(first.lastUsedAt).toBeNull();
  const before = Date.now();
  await expectAccepted(gateways, first.key);
  const used = await waitFor(
    async () => {
      const got = await api.GET("/api/v1/api-key/{id}", { params: { path: { id: first.id } } });
      return got.data?.data.lastUsedAt ?? undefined;
    },
    20_000,
    100,
  );
  expect(Date.parse(used)).toBeGreaterThanOrEqual(before - 1000);
  expect(Date.parse(used)).toBeLessThanOrEqual(Date.now());

  // Roll with an overlap: both keys work everywhere; the new one is a copy with a new secret.
  const rolled = await roll(api, first.id, 3600);
  expect(rolled.response.status).toBe(201);
  const second = rolled.data!.data;
  expect(second).toMatchObject({ name: "sync", scopes: ["clients.read"], expiresAt: null, isActive: true, lastUsedAt: null });
  expect(second.id).not.toBe(first.id);
  await expectAccepted(gateways, first.key);
  await expectAccepted(gateways, second.key);
  const firstNow = (await api.GET("/api/v1/api-key/{id}", { params: { path: { id: first.id } } })).data!.data;
  expect(Date.parse(firstNow.expiresAt!)).toBeGreaterThan(Date.now() + 3500_000);

  // An overlap of 0: the old key is refused at once on every gateway, the new one works.
  const now = await roll(api, second.id, 0);
  expect(now.response.status).toBe(201);
  const third = now.data!.data;
  await expectExpired(gateways, second.key);
  await expectAccepted(gateways, third.key);
  const again = await roll(api, second.id);
  expect(again.response.status).toBe(409);
  expect(again.error).toEqual({ success: false, error: { code: 409005, message: "API key is not active" } });

  // A short overlap: accepted until its new expiresAt, refused from then on by every gateway.
  const short = await roll(api, third.id, 1);
  expect(short.response.status).toBe(201);
  const expiresAt = Date.parse((await api.GET("/api/v1/api-key/{id}", { params: { path: { id: third.id } } })).data!.data.expiresAt!);
  for (const url of gateways) {
    const refused = await waitFor(
      async () => {
        const result = await useKey(url, third.key);
        if (result.status === 200) return undefined;
        return result;
      },
      20_000,
      100,
    );
    expect(refused).toMatchObject({ status: 401, code: 401020 });
    expect(refused.at).toBeGreaterThanOrEqual(expiresAt);
  }
  await expectAccepted(gateways, short.data!.data.key);

  // A revoked key cannot be rolled; an API key cannot roll at all.
  await api.DELETE("/api/v1/api-key/{id}", { params: { path: { id: first.id } } });
  const revoked = await roll(api, first.id);
  expect([revoked.response.status, revoked.error?.error.code]).toEqual([409, 409005]);
  const byKey = await createCrmClient({ baseUrl, apiKey: short.data!.data.key }).POST("/api/v1/api-key/{id}/roll", { params: { path: { id: third.id } } });
  expect([byKey.response.status, byKey.error?.error.code]).toEqual([401, 401014]);
}

/**
 * Extensions §E3.2 through the gateway(s): an allow-list refuses the address (403001) on every
 * gateway, a PATCH reaches them all before its answer, a key's own limit is one budget across them
 * (Redis in distributed mode), and lastUsedIp names the caller. Requests come from loopback.
 */
export async function runApiKeyControlsFlow(gateways: readonly string[], suffix: string): Promise<void> {
  const [baseUrl] = gateways as [string];
  const anonymous = createCrmClient({ baseUrl });
  const signUp = await anonymous.POST("/api/v1/auth/sign-up", {
    body: { businessName: `Key controls ${suffix}`, email: `key-controls-${suffix}@example.test`, password: "correct-horse-battery" },
  });
  expect(signUp.response.status).toBe(201);
  const api = createCrmClient({ baseUrl, accessToken: signUp.data!.data.accessToken });

  const created = await api.POST("/api/v1/api-key", { body: { name: "partner", allowedIps: ["198.51.100.0/24", "::ffff:203.0.113.9"] } });
  expect(created.response.status).toBe(201);
  const key = created.data!.data;
  expect(key).toMatchObject({ allowedIps: ["198.51.100.0/24", "203.0.113.9/32"], rateLimit: null, lastUsedIp: null });
  for (const url of gateways) expect(await useKey(url, key.key)).toMatchObject({ status: 403, code: 403001 });

  const allowed = await api.PATCH("/api/v1/api-key/{id}", {
    params: { path: { id: key.id } },
    body: { allowedIps: ["127.0.0.1", "::1"], rateLimit: { max: 3, windowSeconds: 3600 } },
  });
  expect(allowed.response.status).toBe(200);
  expect(allowed.data!.data).toMatchObject({ allowedIps: ["127.0.0.1/32", "::1/128"], rateLimit: { max: 3, windowSeconds: 3600 } });
  // One budget of 3 across every gateway, shown as the key's own.
  const answers: Array<{ status: number; limit: string | null }> = [];
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${gateways[i % gateways.length]}/api/v1/client?perPage=1`, { headers: { "x-api-key": key.key } });
    await res.arrayBuffer();
    answers.push({ status: res.status, limit: res.headers.get("x-ratelimit-limit") });
  }
  expect(answers).toEqual([
    { status: 200, limit: "3" },
    { status: 200, limit: "3" },
    { status: 200, limit: "3" },
    { status: 429, limit: "3" },
  ]);

  const lastUsedIp = await waitFor(async () => (await api.GET("/api/v1/api-key/{id}", { params: { path: { id: key.id } } })).data?.data.lastUsedIp ?? undefined, 20_000, 100);
  expect(["127.0.0.1", "::1"]).toContain(lastUsedIp);

  // Only name, allowedIps and rateLimit change; an API key cannot change a key.
  const scopes = await api.PATCH("/api/v1/api-key/{id}", { params: { path: { id: key.id } }, body: { scopes: [] } as never });
  expect([scopes.response.status, scopes.error?.error.code]).toEqual([400, 400001]);
  const other = (await api.POST("/api/v1/api-key", { body: { name: "other" } })).data!.data;
  const byKey = await createCrmClient({ baseUrl, apiKey: other.key }).PATCH("/api/v1/api-key/{id}", { params: { path: { id: key.id } }, body: { name: "x" } });
  expect([byKey.response.status, byKey.error?.error.code]).toEqual([401, 401014]);
}
