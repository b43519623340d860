// Every route crm-records declares in @crm/contracts (seven per entity) is mounted, behind its
// declared permission, and nothing else on those paths (see checkDeclaredRoutes). Every one of them
// needs a permission, so no handler runs and the app needs no database.
import { checkDeclaredRoutes, errorCollectingLogger, INTERNAL_TOKEN_SECRET } from "@crm/testing";
import { createApp } from "../src/app";

it("serves every declared crm-records route, and only those", async () => {
  const app = createApp({ logger: errorCollectingLogger("crm-records").logger, prisma: {} as never, sql: {} as never, internalTokenSecret: INTERNAL_TOKEN_SECRET });
  expect(await checkDeclaredRoutes(app, "crm-records")).toEqual([]);
});
