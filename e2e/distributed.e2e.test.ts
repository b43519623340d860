import { runAuditLogFlow } from "./audit-log.flow";
import { runChangeFeedFlow, runConcurrentFeedSync } from "./feed.flow";
import { runTrashFlow } from "./trash.flow";
import { describeDistributed } from "@crm/testing";
import { runCursorWalk } from "./cursor-walk";
import { runCoreFlow } from "./flow";
import { runApiKeyControlsFlow, runApiKeyFlow } from "./api-keys.flow";
import { runBatchCreateFlow, runConditionalRequestFlow, runFieldSelectionFlow } from "./records-ext.flow";
import { runCustomFieldsFlow } from "./custom-fields.flow";
import { startDistributed, type RunningDistributed } from "./harness";
import { runRecordsAndWebhooksSecurityFlow } from "./records-webhooks-security.flow";
import { runWebhookExtensionsFlow } from "./webhook-extensions.flow";
import { runEventDataOrderFlow } from "./event-data-order.flow";

jest.setTimeout(240_000);

describeDistributed("distributed mode (a process per service, PostgreSQL, Redis, Kafka)", () => {
  let product: RunningDistributed;
  beforeAll(async () => {
    // Migrated with the deploy command docs/operations.md gives, through pnpm (the other files run its script directly).
    // Every flow signs up and in from one address: at the default 50 a minute per address, a fast machine
    // ran them all within one window and the last sign-up got 429 (the limit has tests of its own).
    product = await startDistributed({ API_KEY_USAGE_FLUSH_MS: "200", RATE_LIMIT_MAX: "100000" }, { deployWithPnpm: true });
  });
  afterAll(async () => {
    await product?.stop();
  });

  it("carries one request and one event through every tier", async () => {
    await runCoreFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("records: ETag, If-None-Match and If-Match (extensions §E2.3)", async () => {
    await runConditionalRequestFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("records: field selection (extensions §E8)", async () => {
    await runFieldSelectionFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("records: custom fields defined, written, read, unique and delivered (extensions §E4)", async () => {
    await runCustomFieldsFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("records: batch create, all or nothing, an event per record (extensions §E2.2)", async () => {
    await runBatchCreateFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("API keys: lastUsedAt, and a rolled key ends on every gateway sharing Redis (extensions §E3)", async () => {
    const second = await product.startGateway();
    await runApiKeyFlow([product.baseUrl, second], `dist-${Date.now()}`);
  });

  it("API keys: allow-lists, own rate limits shared by every gateway, lastUsedIp (extensions §E3.2)", async () => {
    const second = await product.startGateway();
    await runApiKeyControlsFlow([product.baseUrl, second], `dist-${Date.now()}`);
  });

  it("walks a business's clients by cursor through the gateway while others write, each existing client exactly once", async () => {
    await runCursorWalk(product.baseUrl, `dist-cursor-${Date.now()}`);
  });

  it("delivers each record's data byte for byte as GET shows it, for every entity and action", async () => {
    await runEventDataOrderFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("webhook extensions: previousAttributes, filters, the event catalogue", async () => {
    await runWebhookExtensionsFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("audit log: an entry per change and auth event, in the change's transaction, none for a failed change, no secrets; filters, cursors, history (extensions §E7)", async () => {
    await runAuditLogFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("issue 35: include and webhook subscriptions obey scopes, recoveries are bounded, cursors and the delivery log give nothing away", async () => {
    await runRecordsAndWebhooksSecurityFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("trash: restore brings back exactly the contacts a client's delete took; purge; restored events in webhooks and the feed (extensions §E5)", async () => {
    await runTrashFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("change feed: a sync reads every change once, in order, and follows with wait (extensions §E6)", async () => {
    await runChangeFeedFlow(product.baseUrl, `dist-${Date.now()}`);
  });

  it("change feed: a copy built from the feed while 10 writers create, update and delete ends equal to the API's state (issue 40)", async () => {
    await runConcurrentFeedSync(product.baseUrl, `dist-${Date.now()}`);
  });
});
