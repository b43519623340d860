// `pnpm start:distributed`: the four services as production runs them (compiled dist/, one process
// each, through scripts/start-service.sh like the Docker image), on this machine's PostgreSQL and
// Redis and on Kafka (KAFKA_BROKERS, else librdkafka's mock cluster through kcat). It creates the
// three databases when missing, applies their migrations with db:deploy's runner, generates the
// shared secrets once under DATA_DIR, prints every URL, and on Ctrl-C (or SIGTERM) stops the gateway
// first, then the services, then the mock cluster. docker-compose.yml is the same topology in containers.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { env, loadOrCreateSecret, parseEnv, z } from "@crm/config";
import { ensureDatabase } from "@crm/database";
import { hasKcat, startKafkaMock, stopKafkaMock } from "@crm/kafka-mock";

const ROOT = path.resolve(__dirname, "../../..");

const SERVICES = [
  { name: "identity", schema: "identity", portVar: "IDENTITY_PORT", urlVar: "IDENTITY_URL" },
  { name: "crm-records", schema: "records", portVar: "CRM_RECORDS_PORT", urlVar: "CRM_RECORDS_URL" },
  { name: "webhook-delivery", schema: "webhooks", portVar: "WEBHOOK_DELIVERY_PORT", urlVar: "WEBHOOK_DELIVERY_URL" },
] as const;

/** What the launcher reads, parsed once; everything else in the environment passes through to the services. */
const configSchema = z.object({
  DATA_DIR: z.string().default("./.data/distributed"),
  /** A server role that may create databases; each service gets `<prefix>_<schema>` on it. */
  DATABASE_ADMIN_URL: env.postgresUrl().default("postgresql://postgres@127.0.0.1:5432/postgres"),
  DATABASE_PREFIX: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,40}$/, { message: "lower-case letters, digits and _" })
    .default("crm"),
  REDIS_URL: env.redisUrl().default("redis://127.0.0.1:6379"),
  KAFKA_BROKERS: z.string().min(1).optional(),
  PORT: env.port(3000),
  /** Loopback, as `pnpm start`: this machine only unless HOST opens it (a container sets 0.0.0.0). */
  HOST: z.string().default("127.0.0.1"),
  IDENTITY_PORT: env.port(4001),
  CRM_RECORDS_PORT: env.port(4002),
  WEBHOOK_DELIVERY_PORT: env.port(4003),
  /** The services' log level: warnings and errors only, unless asked for more. */
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("warn"),
});

function say(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** A child's output, each line prefixed with its name, so four processes stay readable in one terminal. */
function relay(child: ChildProcess, label: string): void {
  for (const stream of [child.stdout, child.stderr]) {
    let pending = "";
    stream?.on("data", (chunk: Buffer) => {
      const lines = (pending + chunk.toString("utf8")).split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) process.stdout.write(`[${label}] ${line}\n`);
    });
  }
}

async function waitReady(url: string, children: ChildProcess[], timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const dead = children.find((child) => child.exitCode !== null || child.signalCode !== null);
    if (dead) throw new Error(`a service exited during start-up (pid ${dead.pid}, code ${dead.exitCode ?? dead.signalCode})`);
    const ok = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} was not ready within ${timeoutMs / 1000} s`);
}

const runFile = promisify(execFile);

/** SIGTERM, then SIGKILL after the grace period; resolves when the process has exited. */
async function stopChild(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const force = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(force);
}

async function main(): Promise<void> {
  const config = parseEnv(configSchema, process.env);
  const dataDir = path.resolve(config.DATA_DIR);
  const stops: Array<() => Promise<void> | void> = [];
  let stopping: Promise<void> | undefined;
  const stopAll = (code: number) =>
    (stopping ??= (async () => {
      for (const stop of stops.reverse()) await stop();
      process.exit(code);
    })());
  process.on("SIGINT", () => void stopAll(0));
  process.on("SIGTERM", () => void stopAll(0));

  try {
    // Shared by the four processes, generated once and kept under DATA_DIR (mode 0600).
    const secrets = {
      JWT_SECRET: loadOrCreateSecret(process.env.JWT_SECRET, dataDir, "jwt"),
      INTERNAL_TOKEN_SECRET: loadOrCreateSecret(process.env.INTERNAL_TOKEN_SECRET, dataDir, "internalToken"),
      IDEMPOTENCY_ENCRYPTION_KEY: loadOrCreateSecret(process.env.IDEMPOTENCY_ENCRYPTION_KEY, dataDir, "idempotencyKey"),
      WEBHOOK_SECRET_KEYS: process.env.WEBHOOK_SECRET_KEYS ?? loadOrCreateSecret(undefined, dataDir, "webhookSecretKey"),
    };

    let kafka = config.KAFKA_BROKERS;
    let kafkaNote = "KAFKA_BROKERS";
    if (!kafka) {
      if (!hasKcat()) throw new Error("no KAFKA_BROKERS and no kcat for librdkafka's mock cluster: set KAFKA_BROKERS, or apt-get install kcat");
      const mock = await startKafkaMock();
      stops.push(() => stopKafkaMock(mock));
      kafka = mock.brokers;
      kafkaNote = "librdkafka's mock cluster (kcat): in memory, its events end with it";
    }

    const shared = {
      ...process.env,
      ...secrets,
      NODE_ENV: process.env.NODE_ENV ?? "production",
      DATA_DIR: dataDir,
      REDIS_URL: config.REDIS_URL,
      KAFKA_BROKERS: kafka,
      LOG_LEVEL: config.LOG_LEVEL,
      // One machine, no balancer in front: nothing to wait for on Ctrl-C unless asked (docs/operations.md).
      SHUTDOWN_DRAIN_MS: process.env.SHUTDOWN_DRAIN_MS ?? "0",
      // The mock cluster answers an empty fetch only after the whole wait: keep the wait short (the
      // default, said explicitly so a longer one set for a real cluster is not silently kept here).
      ...(config.KAFKA_BROKERS ? {} : { KAFKA_FETCH_MAX_WAIT_MS: "100" }),
    };
    const children: ChildProcess[] = [];
    const launch = (service: string, env: NodeJS.ProcessEnv) => {
      // Its own process group: Ctrl-C reaches the launcher, which stops the processes in order.
      const child = spawn("sh", [path.join(ROOT, "scripts/start-service.sh"), path.join(ROOT, "services", service)], {
        cwd: ROOT,
        env,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true,
      });
      relay(child, service);
      children.push(child);
      child.once("exit", (code, signal) => {
        if (!stopping) {
          say(`${service} exited (${signal ?? `code ${code}`}); stopping the others`);
          void stopAll(1);
        }
      });
      stops.push(() => stopChild(child));
      return child;
    };

    const urls = Object.fromEntries(SERVICES.map((service) => [service.urlVar, `http://127.0.0.1:${config[service.portVar]}`]));
    const databases: Record<string, string> = {};
    // The services need one another only once they serve: each one's database is made and migrated,
    // and the service started, beside the others'. All settle before a failure stops what did start.
    const started = await Promise.allSettled(
      SERVICES.map(async (service) => {
        const name = `${config.DATABASE_PREFIX}_${service.schema}`;
        const { url, created } = await ensureDatabase(config.DATABASE_ADMIN_URL, name);
        databases[service.name] = `${name}${created ? " (created)" : ""}`;
        // db:deploy's runner, as a release runs it before starting the service.
        await runFile(process.execPath, [path.join(ROOT, "packages/database/dist/cli/deploy.js"), service.schema, path.join(ROOT, "services", service.name, "prisma/migrations")], {
          env: { ...process.env, DATABASE_URL: url },
        }).catch((err: { stdout?: string; stderr?: string }) => {
          throw new Error(`migrations of ${service.name} failed:\n${err.stdout ?? ""}${err.stderr ?? String(err)}`);
        });
        launch(service.name, { ...shared, DATABASE_URL: url, PORT: String(config[service.portVar]), HOST: "127.0.0.1" });
      }),
    );
    for (const outcome of started) if (outcome.status === "rejected") throw outcome.reason;
    // Launched last, so stopped first (stops run in reverse): no new request reaches a flushing service.
    // It starts while the services do; every process is ready before the URLs are printed.
    launch("gateway", { ...shared, ...urls, PORT: String(config.PORT), HOST: config.HOST });
    const shown = config.HOST === "0.0.0.0" ? "127.0.0.1" : config.HOST;
    const gatewayUrl = `http://${shown}:${config.PORT}`;
    await Promise.all([...SERVICES.map((service) => waitReady(urls[service.urlVar]!, children)), waitReady(gatewayUrl, children)]);

    say("");
    say(`CRM platform API (distributed) listening on ${gatewayUrl}/api/v1${config.HOST === "0.0.0.0" ? " (bound to every interface)" : ""}`);
    say(`  gateway           ${gatewayUrl}`);
    for (const service of SERVICES) say(`  ${service.name.padEnd(17)} ${urls[service.urlVar]}   database ${databases[service.name]}`);
    say(`  PostgreSQL        ${new URL(config.DATABASE_ADMIN_URL).host}   Redis ${config.REDIS_URL}`);
    say(`  Kafka             ${kafka}   ${kafkaNote}`);
    say(`  Secrets           ${path.join(dataDir, "secrets")}`);
    say("  Ctrl-C stops everything.");
    say("");
  } catch (err) {
    say(`start:distributed failed: ${err instanceof Error ? err.message : String(err)}`);
    await stopAll(1);
  }
}

main().catch((err: unknown) => {
  // A bad setting: one line naming the variable, as every service says it.
  say(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
