import { runAuditLogFlow } from "./audit-log.flow";
import { runChangeFeedFlow, runConcurrentFeedSync } from "./feed.flow";
import { runTrashFlow } from "./trash.flow";
import { rmSync } from "node:fs";
import net from "node:net";
import { waitFor } from "@crm/testing";
import { ApiClient } from "./api-client";
import { runApiKeyControlsFlow, runApiKeyFlow } from "./api-keys.flow";
import { runCursorWalk } from "./cursor-walk";
import { runBatchCreateFlow, runConditionalRequestFlow, runFieldSelectionFlow } from "./records-ext.flow";
import { runCustomFieldsFlow } from "./custom-fields.flow";
import { runCoreFlow } from "./flow";
import { runRecordsAndWebhooksSecurityFlow } from "./records-webhooks-security.flow";
import { runWebhookExtensionsFlow } from "./webhook-extensions.flow";
import { runEventDataOrderFlow } from "./event-data-order.flow";
import { startEmbedded } from "./harness";

jest.setTimeout(180_000);

describe("single-machine mode (pnpm start, embedded PGlite, in-process store and bus)", () => {
  let product: Awaited<ReturnType<typeof startEmbedded>>;
  beforeAll(async () => {
    // As in distributed.e2e: every flow signs up and in from one address, faster than 50 a minute.
    product = await startEmbedded({ API_KEY_USAGE_FLUSH_MS: "200", RATE_LIMIT_MAX: "100000" });
  });
  afterAll(async () => {
    await product?.stop();
    if (product) rmSync(product.dataDir, { recursive: true, force: true });
  });

  it("carries one request and one event through every tier", async () => {
    await runCoreFlow(product.baseUrl, "embedded");
  });

  it("records: ETag, If-None-Match and If-Match (extensions §E2.3)", async () => {
    await runConditionalRequestFlow(product.baseUrl, "embedded");
  });

  it("records: field selection (extensions §E8)", async () => {
    await runFieldSelectionFlow(product.baseUrl, "embedded");
  });

  it("records: custom fields defined, written, read, unique and delivered (extensions §E4)", async () => {
    await runCustomFieldsFlow(product.baseUrl, "embedded");
  });

  it("records: batch create, all or nothing, an event per record (extensions §E2.2)", async () => {
    await runBatchCreateFlow(product.baseUrl, "embedded");
  });

  it("API keys: lastUsedAt and roll with an overlap (extensions §E3)", async () => {
    await runApiKeyFlow([product.baseUrl], "embedded-keys");
  });

  it("API keys: allow-lists, own rate limits and lastUsedIp (extensions §E3.2)", async () => {
    await runApiKeyControlsFlow([product.baseUrl], `embedded-${Date.now()}`);
  });

  it("walks a business's clients by cursor through the gateway while others write, each existing client exactly once", async () => {
    await runCursorWalk(product.baseUrl, "embedded");
  });

  it("delivers each record's data byte for byte as GET shows it, for every entity and action", async () => {
    await runEventDataOrderFlow(product.baseUrl, "embedded");
  });

  it("webhook extensions: previousAttributes, filters, the event catalogue", async () => {
    await runWebhookExtensionsFlow(product.baseUrl, "embedded");
  });

  it("audit log: an entry per change and auth event, in the change's transaction, none for a failed change, no secrets; filters, cursors, history (extensions §E7)", async () => {
    await runAuditLogFlow(product.baseUrl, "embedded");
  });

  it("issue 35: include and webhook subscriptions obey scopes, recoveries are bounded, cursors and the delivery log give nothing away", async () => {
    await runRecordsAndWebhooksSecurityFlow(product.baseUrl, "embedded");
  });

  it("answers unknown routes, malformed JSON and oversized bodies with the envelope", async () => {
    const api = new ApiClient(product.baseUrl);
    const missing = await api.call("GET", "/api/v1/nope");
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({ success: false, error: { code: 404000, message: "Route not found" } });
    expect(missing.headers.get("x-request-id")).toBeTruthy();

    const malformed = await fetch(`${product.baseUrl}/api/v1/auth/sign-in`, { method: "POST", headers: { "content-type": "application/json" }, body: "{oops" });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { code: number } }).error.code).toBe(400002);

    const big = await fetch(`${product.baseUrl}/api/v1/auth/sign-in`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "x".repeat(1024 * 1024 + 10) }),
    });
    expect(big.status).toBe(413);
    expect(((await big.json()) as { error: { code: number } }).error.code).toBe(413000);

    const echoed = await api.call("GET", "/api/v1/capabilities", undefined, { "x-request-id": "trace-me-123" });
    expect(echoed.headers.get("x-request-id")).toBe("trace-me-123");
  });

  it("listens on loopback only unless HOST says otherwise, and prints what it bound", async () => {
    // 127.0.0.2 is this machine too (Linux routes all of 127/8 to loopback) but not the address
    // 127.0.0.1 is bound to: it reaches a wildcard listener and is refused by a loopback one.
    const port = Number(new URL(product.baseUrl).port);
    // The banner follows readiness by a moment (the gateway answers /readyz as soon as it listens).
    await waitFor(() => product.logs().includes("CRM platform API listening on"), 10_000);
    expect(product.logs()).toContain(`CRM platform API listening on http://127.0.0.1:${port}/api/v1\n`);
    expect(await connects("127.0.0.2", port)).toBe(false);
    expect(await connects("127.0.0.1", port)).toBe(true);

    const { startEmbedded: start } = await import("./harness");
    const open = await start({ HOST: "0.0.0.0" });
    try {
      const openPort = Number(new URL(open.baseUrl).port);
      await waitFor(() => open.logs().includes("CRM platform API listening on"), 10_000);
      expect(open.logs()).toContain(`CRM platform API listening on every interface (0.0.0.0:${openPort}); from this machine: http://127.0.0.1:${openPort}/api/v1\n`);
      expect(await connects("127.0.0.2", openPort)).toBe(true);
    } finally {
      await open.stop();
      rmSync(open.dataDir, { recursive: true, force: true });
    }
  });

  it("trash: restore brings back exactly the contacts a client's delete took; purge; restored events in webhooks and the feed (extensions §E5)", async () => {
    await runTrashFlow(product.baseUrl, `embedded-${Date.now()}`);
  });

  it("change feed: a sync reads every change once, in order, and follows with wait (extensions §E6)", async () => {
    await runChangeFeedFlow(product.baseUrl, `embedded-${Date.now()}`);
  });

  it("change feed: a copy built from the feed while 10 writers create, update and delete ends equal to the API's state (issue 40)", async () => {
    await runConcurrentFeedSync(product.baseUrl, `embedded-${Date.now()}`);
  });

  it("keeps data across a restart of the same DATA_DIR", async () => {
    const api = new ApiClient(product.baseUrl);
    const { email, password } = await api.signUp("restart");
    await product.stop();
    const { startEmbedded: again } = await import("./harness");
    const restarted = await again({ DATA_DIR: product.dataDir });
    product = { ...restarted, dataDir: product.dataDir };
    const signIn = await new ApiClient(product.baseUrl).call("POST", "/api/v1/auth/sign-in", { email, password });
    expect(signIn.status).toBe(200);
  });
});

/** Whether a TCP connection to host:port is accepted (bounded: a refused or silent port is false). */
function connects(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (accepted: boolean) => {
      socket.destroy();
      resolve(accepted);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}
