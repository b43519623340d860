// /capabilities reports the settings the owning services run with, as they report them, not
// settings of the gateway's own that could disagree with them in distributed mode.
import express from "express";
import { INTERNAL_CAPABILITIES_PATH, INTERNAL_TOKEN_HEADER, type IdentityCapabilitiesAnswer, type WebhookCapabilities } from "@crm/contracts";
import { listen, verifyInternalToken } from "@crm/service-kit";
import { CapabilitiesSource } from "./capabilities";

const SECRET = "capabilities-test-internal-secret-0123456789";

/** An owning service's internal endpoint: its current part, or 503 while it has none. */
async function owner(part: () => object | undefined) {
  const app = express();
  app.get(INTERNAL_CAPABILITIES_PATH, (req, res) => {
    verifyInternalToken(req.get(INTERNAL_TOKEN_HEADER) ?? "", SECRET);
    const body = part();
    if (body) res.json(body);
    else res.status(503).end();
  });
  return listen(app, 0, "127.0.0.1");
}

describe("CapabilitiesSource", () => {
  let identity: IdentityCapabilitiesAnswer | undefined;
  let webhooks: WebhookCapabilities | undefined;
  const servers: Array<{ close(): Promise<void> }> = [];
  let source: (cacheMs: number) => CapabilitiesSource;

  beforeAll(async () => {
    const id = await owner(() => identity);
    const wh = await owner(() => webhooks);
    servers.push(id, wh);
    source = (cacheMs) =>
      new CapabilitiesSource({ config: { RATE_LIMIT_MAX: 7, RATE_LIMIT_WINDOW_MS: 1000 }, identityUrl: id.url, webhookDeliveryUrl: wh.url, internalTokenSecret: SECRET, cacheMs });
  });
  afterAll(async () => Promise.all(servers.map((s) => s.close())));
  beforeEach(() => {
    identity = { accessTokenTtlS: 60, refreshTokenTtlS: 120, signUpOpen: false };
    webhooks = { webhookTimeoutMs: 1500, webhookRetryDelaysMs: [5, 10, 20], webhookRetryIntervalMs: 250, webhookRetryBatchSize: 3 };
  });

  it("reports each owning service's settings beside the gateway's own", async () => {
    const document = await source(60_000).get();
    expect(document.limits).toMatchObject({
      rateLimit: { max: 7, windowMs: 1000 },
      accessTokenTtlS: 60,
      refreshTokenTtlS: 120,
      webhookTimeoutMs: 1500,
      webhookRetryDelaysMs: [5, 10, 20],
      webhookRetryIntervalMs: 250,
      webhookRetryBatchSize: 3,
      customFieldsPerEntityMax: 100,
      customFieldsUniquePerEntityMax: 10,
    });
    expect(document.customFieldTypes).toHaveLength(11);
    expect(document.signUpOpen).toBe(false);
  });

  it("answers from its cache, then asks again once the cache is older than cacheMs", async () => {
    const caps = source(60_000);
    const first = await caps.get();
    identity = { accessTokenTtlS: 61, refreshTokenTtlS: 120, signUpOpen: false };
    expect(await caps.get()).toBe(first);

    const fresh = source(0);
    expect((await fresh.get()).limits.accessTokenTtlS).toBe(61);
    identity = { accessTokenTtlS: 62, refreshTokenTtlS: 120, signUpOpen: false };
    expect((await fresh.get()).limits.accessTokenTtlS).toBe(62);
  });

  it("keeps serving the last document when a refresh fails, and is 503000 with none yet", async () => {
    const caps = source(0);
    const first = await caps.get();
    webhooks = undefined;
    expect(await caps.get()).toBe(first);
    await expect(source(0).get()).rejects.toMatchObject({ code: 503000 });
  });
});
