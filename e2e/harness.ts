// Starts the product the way users start it, as child processes, and drives it over HTTP.
// Embedded: `pnpm start` (all services in one process). Distributed: `db:deploy` then one process per
// service against PostgreSQL, Redis and Kafka. Both run the compiled output (`pnpm build`, brought up
// to date by jest's global setup), with the same command the start scripts end in
// (`scripts/start-service.sh` for each distributed service).
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createTestDatabase, freePort, startKafkaMock, startReceiver as startKitReceiver, testInfra, waitFor, type ReceivedRequest } from "@crm/testing";

export const ROOT = path.resolve(__dirname, "..");

export interface RunningProduct {
  baseUrl: string;
  logs: () => string;
  stop(): Promise<void>;
}

/**
 * Only what a user's shell would pass, plus the test's own settings: nothing from jest leaks in. No
 * drain period on SIGTERM (no balancer in front) unless a test asks for one.
 */
export function baseEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { PATH, HOME, LANG } = process.env;
  return { PATH, HOME, LANG, NODE_ENV: "production", LOG_LEVEL: "warn", WEBHOOK_ALLOW_PRIVATE_TARGETS: "true", SHUTDOWN_DRAIN_MS: "0", ...extra };
}

let pnpmInvocation: [string, string[]] | undefined;

/**
 * `pnpm <args>` as a user runs it: the pnpm on PATH, else the version package.json pins, through npx
 * (the README's own way; jest run directly on a machine without pnpm installed has none on PATH).
 */
export function pnpm(args: string[]): [string, string[]] {
  if (pnpmInvocation === undefined) {
    const onPath = spawnSync("pnpm", ["--version"], { stdio: "ignore" }).error === undefined;
    const { packageManager } = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as { packageManager: string };
    pnpmInvocation = onPath ? ["pnpm", []] : ["npx", ["-y", packageManager]];
  }
  return [pnpmInvocation[0], [...pnpmInvocation[1], ...args]];
}

/** A compiled service started as its `pnpm start` and the Docker image start it (its runtime flags included). */
export function serviceCommand(serviceDir: string): [string, string[]] {
  return ["sh", [path.join(ROOT, "scripts/start-service.sh"), path.resolve(ROOT, serviceDir)]];
}

function spawnLogged(args: string[] | [string, string[]], env: NodeJS.ProcessEnv, sink: string[], label: string, cwd = ROOT): ChildProcess {
  const [command, argv] = typeof args[1] === "object" ? (args as [string, string[]]) : [process.execPath, args as string[]];
  const child = spawn(command, argv, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  const collect = (chunk: Buffer) => {
    sink.push(`[${label}] ${chunk.toString("utf8")}`);
    if (sink.length > 2000) sink.splice(0, sink.length - 2000);
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  return child;
}

/** A command run to its end without blocking this process's event loop: its exit status and output. */
/** A command's exit and output, without blocking the event loop (fault proxies in this process keep passing bytes). */
export function run(
  command: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): Promise<{ status: number | null; error?: Error; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { ...options, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => void (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")));
    child.once("error", (error) => resolve({ status: null, error, stdout, stderr }));
    child.once("close", (status) => resolve({ status, stdout, stderr }));
  });
}

/** SIGTERM, as an orchestrator would; a graceful shutdown exits 0 well within the grace period. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const code = await exited;
  clearTimeout(timer);
  if (code !== 0) throw new Error(`process did not shut down cleanly on SIGTERM (exit code ${code})`);
}

export async function waitReady(baseUrl: string, children: ChildProcess[], logs: () => string, timeoutMs = 90_000): Promise<void> {
  try {
    await waitFor(
      async () => {
        const dead = children.find((c) => c.exitCode !== null);
        if (dead) throw new Error(`a process exited with code ${dead.exitCode}`);
        const res = await fetch(`${baseUrl}/readyz`).catch(() => undefined);
        return res?.status === 200;
      },
      timeoutMs,
      // A refused connection or a /readyz answer costs little: each start or restart is seen ready within 50 ms.
      50,
    );
  } catch (err) {
    throw new Error(`product did not become ready: ${String(err)}\n${logs()}`);
  }
}

/**
 * `pnpm start` with no configuration but a port and a fresh data directory.
 * `root`: another checkout's compiled build to start instead of this one (benchmarks comparing two builds).
 */
export async function startEmbedded(extra: Record<string, string> = {}, { root = ROOT }: { root?: string } = {}): Promise<RunningProduct & { dataDir: string; pid: number }> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crm-e2e-"));
  const port = await freePort();
  const sink: string[] = [];
  const child = spawnLogged(["infra/standalone/dist/start.js"], baseEnv({ PORT: String(port), DATA_DIR: dataDir, ...extra }), sink, "standalone", root);
  const baseUrl = `http://127.0.0.1:${port}`;
  const logs = () => sink.join("");
  try {
    await waitReady(baseUrl, [child], logs);
  } catch (err) {
    await stopChild(child);
    throw err;
  }
  return {
    baseUrl,
    dataDir,
    pid: child.pid!,
    logs,
    stop: async () => {
      await stopChild(child);
    },
  };
}

const SERVICES = [
  { name: "identity", dir: "services/identity", schema: "identity", urlVar: "IDENTITY_URL" },
  { name: "crm-records", dir: "services/crm-records", schema: "records", urlVar: "CRM_RECORDS_URL" },
  { name: "webhook-delivery", dir: "services/webhook-delivery", schema: "webhooks", urlVar: "WEBHOOK_DELIVERY_URL" },
] as const;

/** What a distributed run exposes beyond the gateway: each service's own address and database (benchmarks use them). */
export interface RunningDistributed extends RunningProduct {
  services: Record<(typeof SERVICES)[number]["name"], { url: string; databaseUrl: string }>;
  internalTokenSecret: string;
  /**
   * Starts one more gateway on the same services, Redis and secrets (stopped with the product); its base URL.
   * `serviceDir`: another build's folder (holding `dist/main.js`), for benchmarks comparing two builds.
   */
  startGateway(serviceDir?: string): Promise<string>;
  /** Every process of the run (each replica of each service, then each gateway), to restart one by one. */
  processes: RestartableProcess[];
}

/**
 * One replica's process: `restart()` SIGTERMs it (it must exit 0), starts it again on the same port and
 * waits until its /readyz answers 200. `serviceDir`: start another build's folder from then on (an
 * upgrade or a downgrade of that replica, as a rolling deploy does).
 */
export interface RestartableProcess {
  label: string;
  url: string;
  restart(serviceDir?: string): Promise<void>;
}

export interface DistributedOptions {
  /**
   * `host:port` every service reaches PostgreSQL through (a fault proxy in front of the test server);
   * `db:deploy` connects directly. `services[...].databaseUrl` stays the direct address.
   */
  databaseVia?: string;
  /** Processes per service behind the gateway (each gateway is given their URLs as a comma list); 1 by default. */
  replicas?: number;
  /**
   * Each migration deploy through `pnpm --filter @crm/<service> db:deploy`, the command docs/operations.md
   * gives (distributed.e2e.test.ts deploys so). Otherwise the package's db:deploy script runs as pnpm would
   * run it (packageScript): the same commands, without pnpm's own start-up, ~3 s of CPU per call through
   * npx, three per product.
   */
  deployWithPnpm?: boolean;
}

/** `pnpm <args>` (see pnpm) from the workspace root, in the shape packageScript gives. */
function pnpmCommand(args: string[], env: NodeJS.ProcessEnv): { command: string; args: string[]; options: { cwd: string; env: NodeJS.ProcessEnv } } {
  const [command, argv] = pnpm(args);
  return { command, args: argv, options: { cwd: ROOT, env } };
}

/**
 * A package's script as `pnpm run` runs it: `sh -c` in the package's folder, its and the workspace's
 * node_modules/.bin first on PATH. The script is read from the package's package.json, its one declaration.
 * `root`: another workspace's folder (a previous release's).
 */
export function packageScript(
  packageDir: string,
  script: string,
  env: NodeJS.ProcessEnv,
  root = ROOT,
): { command: string; args: string[]; options: { cwd: string; env: NodeJS.ProcessEnv } } {
  const cwd = path.resolve(root, packageDir);
  const { scripts } = JSON.parse(readFileSync(path.join(cwd, "package.json"), "utf8")) as { scripts?: Record<string, string> };
  const text = scripts?.[script];
  if (!text) throw new Error(`${packageDir}/package.json has no "${script}" script`);
  const bins = [path.join(cwd, "node_modules/.bin"), path.join(root, "node_modules/.bin")];
  return { command: "sh", args: ["-c", text], options: { cwd, env: { ...env, PATH: [...bins, env.PATH].join(path.delimiter) } } };
}

/** Each service its own process and database, with Redis and Kafka, as in docker-compose. */
export async function startDistributed(extra: Record<string, string> = {}, options: DistributedOptions = {}): Promise<RunningDistributed> {
  if (!testInfra.databaseUrl || !testInfra.redisUrl || !testInfra.kafkaBrokers) throw new Error("distributed mode needs PostgreSQL, Redis and Kafka");
  // Every run's webhook-delivery joins the same consumer group on the same topic, so two runs on one cluster
  // (jest runs test files in parallel) would share partitions and take each other's events. On the mock,
  // each run gets a cluster of its own; a real cluster given through KAFKA_BROKERS is shared as it is.
  const privateKafka = testInfra.kafkaIsMock && !extra.KAFKA_BROKERS ? await startKafkaMock() : undefined;
  const stopPrivateKafka = () => {
    try {
      if (privateKafka) process.kill(-privateKafka.process.pid!, "SIGKILL");
    } catch {
      /* already gone */
    }
  };
  const shared = {
    REDIS_URL: testInfra.redisUrl,
    KAFKA_BROKERS: privateKafka?.brokers ?? testInfra.kafkaBrokers,
    JWT_SECRET: randomBytes(32).toString("hex"),
    INTERNAL_TOKEN_SECRET: randomBytes(32).toString("hex"),
    IDEMPOTENCY_ENCRYPTION_KEY: randomBytes(32).toString("hex"),
    DATA_DIR: mkdtempSync(path.join(os.tmpdir(), "crm-e2e-dist-")),
    ...extra,
  };
  const sink: string[] = [];
  const logs = () => sink.join("");
  // Every process in start order (each service's replicas, then the gateways): stopped in reverse, so
  // no request reaches a stopping service through a gateway; restarted in this order.
  const started: Array<ChildProcess | undefined> = [];
  const processes: RestartableProcess[] = [];
  const children = () => started.filter((child): child is ChildProcess => child !== undefined);
  /**
   * A process's place in that order, taken before it starts; the returned function starts it with `env`, and
   * it stays restartable with the same environment (and command, unless another build is named).
   */
  const reserve = (command: [string, string[]], label: string, url: string): ((env: NodeJS.ProcessEnv) => void) => {
    const index = started.push(undefined) - 1;
    let env: NodeJS.ProcessEnv = {};
    processes.push({
      label,
      url,
      restart: async (serviceDir) => {
        await stopChild(started[index]!);
        if (serviceDir !== undefined) command = serviceCommand(serviceDir);
        started[index] = spawnLogged(command, env, sink, label);
        await waitReady(url, children(), logs);
      },
    });
    return (given) => {
      env = given;
      started[index] = spawnLogged(command, env, sink, label);
    };
  };
  const databases: Array<{ drop: () => Promise<void> }> = [];
  const services = {} as RunningDistributed["services"];
  const stopAll = async () => {
    for (const child of children().reverse()) await stopChild(child);
  };
  try {
    // Every address is chosen first, so each process starts as soon as what it needs is there.
    const plans = [];
    for (const service of SERVICES) {
      const replicas = [];
      for (let replica = 0; replica < (options.replicas ?? 1); replica++) {
        const url = `http://127.0.0.1:${await freePort()}`;
        replicas.push({ url, start: reserve(serviceCommand(service.dir), replica === 0 ? service.name : `${service.name}-${replica + 1}`, url) });
      }
      plans.push({ service, replicas });
    }
    const urls = Object.fromEntries(plans.map(({ service, replicas }) => [service.urlVar, replicas.map((r) => r.url).join(",")]));
    const gateway = async (label: string, serviceDir = "services/gateway"): Promise<string> => {
      const url = `http://127.0.0.1:${await freePort()}`;
      reserve(serviceCommand(serviceDir), label, url)(baseEnv({ ...shared, ...urls, PORT: new URL(url).port, HOST: "127.0.0.1" }));
      return url;
    };
    // The gateway starts beside the services: its /readyz answers 200 once each of them answers.
    const baseUrl = await gateway("gateway");
    // Each service's database made and migrated, then its replicas started, the services side by side;
    // all settled before a failure is thrown, so none starts after the clean-up.
    const settled = await Promise.allSettled(
      plans.map(async ({ service, replicas }) => {
        const db = await createTestDatabase(`crm_e2e_${service.schema}`);
        databases.push(db);
        // The deploy command users run before starting a release (or its script without pnpm: deployWithPnpm).
        const deployCommand = options.deployWithPnpm
          ? pnpmCommand(["--filter", `@crm/${service.name}`, "db:deploy"], baseEnv({ DATABASE_URL: db.url }))
          : packageScript(service.dir, "db:deploy", baseEnv({ DATABASE_URL: db.url }));
        // Not spawnSync: a fault proxy in this process must keep passing the started services' bytes.
        const deploy = await run(deployCommand.command, deployCommand.args, deployCommand.options);
        if (deploy.status !== 0) throw new Error(`db:deploy ${service.name} failed (${deploy.error ?? `exit code ${deploy.status}`}):\n${deploy.stdout}\n${deploy.stderr}`);
        const serviceDatabaseUrl = new URL(db.url);
        if (options.databaseVia) serviceDatabaseUrl.host = options.databaseVia;
        for (const { url, start } of replicas) start(baseEnv({ ...shared, DATABASE_URL: serviceDatabaseUrl.toString(), PORT: new URL(url).port, HOST: "127.0.0.1" }));
        services[service.name] = { url: replicas[0]!.url, databaseUrl: db.url };
      }),
    );
    for (const outcome of settled) if (outcome.status === "rejected") throw outcome.reason;
    await waitReady(baseUrl, children(), logs);
    return {
      baseUrl,
      logs,
      services,
      internalTokenSecret: shared.INTERNAL_TOKEN_SECRET,
      processes,
      startGateway: async (serviceDir) => {
        const url = await gateway(`gateway-${started.length}`, serviceDir);
        await waitReady(url, children(), logs);
        return url;
      },
      stop: async () => {
        await stopAll();
        for (const db of databases) await db.drop();
        stopPrivateKafka();
        rmSync(shared.DATA_DIR, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await stopAll();
    for (const db of databases) await db.drop().catch(() => undefined);
    stopPrivateKafka();
    throw err;
  }
}

/** A webhook receiver on loopback that records every request and answers `status` (the test kit's). */
export async function startReceiver(status = 200): Promise<{ url: string; received: ReceivedRequest[]; close(): Promise<void> }> {
  const receiver = await startKitReceiver({ kind: "status", status, body: "ok" }, "/hooks");
  return { url: receiver.url, received: receiver.requests, close: () => receiver.close() };
}

export function tempDirCleanup(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
