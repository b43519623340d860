// Every route identity declares in @crm/contracts is mounted, behind its declared permission, and
// nothing else on those paths (see checkDeclaredRoutes). The app runs on inert stores: only the
// permission-free handlers run, and what they answer does not matter here, only that they exist.
import { checkDeclaredRoutes, errorCollectingLogger, INTERNAL_TOKEN_SECRET } from "@crm/testing";
import { createApp } from "../src/app";

it("serves every declared identity route, and only those", async () => {
  const app = createApp({
    config: {
      ACCESS_TOKEN_TTL_S: 900,
      REFRESH_TOKEN_TTL_S: 3600,
      ALLOW_SIGN_UP: false,
      PASSWORD_HASH_COST: 1,
      PASSWORD_HASH_CONCURRENCY: 1,
      PASSWORD_HASH_QUEUE: 0,
      SIGN_IN_MAX_FAILURES: 5,
      SIGN_IN_FAILURE_WINDOW_MS: 60_000,
      SIGN_IN_LOCK_BASE_MS: 1000,
      SIGN_IN_LOCK_MAX_MS: 60_000,
      RATE_LIMIT_KEY_MAX: 1000,
    },
    logger: errorCollectingLogger("identity").logger,
    prisma: {} as never,
    kv: {} as never,
    jwtSecret: "declared-routes-jwt-secret-0123456789abcdef",
    internalTokenSecret: INTERNAL_TOKEN_SECRET,
    readiness: [],
  });
  expect(await checkDeclaredRoutes(app, "identity")).toEqual([]);
});
