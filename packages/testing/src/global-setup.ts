import { spawnSync } from "node:child_process";
import os from "node:os";
import path from "node:path";
import { startInfra, type StartedInfra } from "./infra";
import { createFixturesDir, FIXTURES_DIR_VARIABLE } from "./fixtures-run";

declare global {
  // eslint-disable-next-line no-var
  var __crmInfra: StartedInfra | undefined;
}

/** Jest global setup: find or start the infrastructure once and hand it to every worker via env. */
export default async function globalSetup(): Promise<void> {
  buildIfStale();
  const infra = await startInfra((line) => process.stdout.write(`\n${line}\n`));
  globalThis.__crmInfra = infra;
  if (infra.databaseUrl) process.env.TEST_DATABASE_URL = infra.databaseUrl;
  if (infra.redisUrl) process.env.TEST_REDIS_URL = infra.redisUrl;
  if (infra.kafkaBrokers) process.env.TEST_KAFKA_BROKERS = infra.kafkaBrokers;
  if (infra.kafkaIsMock) process.env.TEST_KAFKA_IS_MOCK = "1";
  // Schemas migrated once for the run (./migrated-templates.ts); TEST_MIGRATE_EACH=1 migrates every
  // test database from scratch instead, to compare.
  if (process.env.TEST_MIGRATE_EACH !== "1") process.env[FIXTURES_DIR_VARIABLE] = createFixturesDir(os.tmpdir());
  // The product itself must never pick these up implicitly inside tests: each test decides its mode.
  delete process.env.DATABASE_URL;
  delete process.env.REDIS_URL;
  delete process.env.KAFKA_BROKERS;
}

/** The end-to-end tests run the compiled product: never older than the sources being tested. */
function buildIfStale(): void {
  const root = path.resolve(__dirname, "../../..");
  const build = spawnSync(process.execPath, [path.join(root, "scripts/build.mjs"), "--if-stale"], { cwd: root, encoding: "utf8" });
  if (build.status !== 0) throw new Error(`pnpm build failed:\n${build.stdout}${build.stderr}`);
}
