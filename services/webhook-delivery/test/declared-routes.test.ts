// Every route webhook-delivery declares in @crm/contracts is mounted, behind its declared permission,
// and nothing else on those paths (PATCH of a webhook included: the interface has only PUT). Every
// one of them needs a permission, so no handler runs and the app needs no database.
import { checkDeclaredRoutes, errorCollectingLogger, INTERNAL_TOKEN_SECRET } from "@crm/testing";
import { createApp } from "../src/app";

it("serves every declared webhook-delivery route, and only those", async () => {
  const app = createApp({
    logger: errorCollectingLogger("webhook-delivery").logger,
    internalTokenSecret: INTERNAL_TOKEN_SECRET,
    readiness: [],
    capabilities: {} as never,
    webhooks: {} as never,
    deliveries: {} as never,
    scheduler: {} as never,
    manualRetryWaitMs: 0,
  });
  expect(await checkDeclaredRoutes(app, "webhook-delivery")).toEqual([]);
});
