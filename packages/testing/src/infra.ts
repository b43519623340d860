// Where the distributed-mode tests find PostgreSQL, Redis and Kafka, in this order:
// 1. DATABASE_URL / REDIS_URL / KAFKA_BROKERS from the environment;
// 2. containers started by testcontainers, where a Docker engine answers;
// 3. PostgreSQL and Redis on their default loopback ports, and librdkafka's mock cluster (Debian `kcat`).
// The answers are written to process.env by jest's global setup, so every worker sees the same ones.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";

export interface StartedInfra {
  databaseUrl?: string;
  redisUrl?: string;
  kafkaBrokers?: string;
  /** True when kafkaBrokers is a librdkafka mock cluster started here (tests may start more of their own). */
  kafkaIsMock?: boolean;
  stop(): Promise<void>;
}

function portOpen(port: number, host = "127.0.0.1"): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

function dockerAvailable(): boolean {
  try {
    execFileSync("docker", ["info"], { stdio: "ignore", timeout: 5000 });
    return true;
  } catch {
    return false;
  }
}

function hasCommand(name: string): boolean {
  try {
    execFileSync("sh", ["-c", `command -v ${name}`], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** librdkafka's in-memory mock cluster: produce, consume and consumer groups work; admin APIs do not. */
export async function startKafkaMock(): Promise<{ brokers: string; process: ChildProcess }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kafka-mock-"));
  const logFile = path.join(dir, "mock.log");
  const child = spawn("sh", ["-c", `tail -f /dev/null | exec kcat -P -b 127.0.0.1:1 -t _keepalive -X test.mock.num.brokers=1 -d mock 2>"${logFile}"`], {
    stdio: "ignore",
    detached: true,
  });
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 100));
    let text = "";
    try {
      text = readFileSync(logFile, "utf8");
    } catch {
      continue;
    }
    const match = /bootstrap\.servers=([0-9.:,]+)/.exec(text) ?? /Mock cluster .* bootstrap servers? ([0-9.:,]+)/i.exec(text);
    if (match?.[1]) return { brokers: match[1], process: child };
  }
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    /* already gone */
  }
  throw new Error(`kcat mock cluster did not report its bootstrap servers (see ${logFile})`);
}

export async function startInfra(log: (line: string) => void): Promise<StartedInfra> {
  const stops: Array<() => Promise<void>> = [];
  const found: Omit<StartedInfra, "stop"> = {
    databaseUrl: process.env.DATABASE_URL,
    redisUrl: process.env.REDIS_URL,
    kafkaBrokers: process.env.KAFKA_BROKERS,
  };
  const missing = !found.databaseUrl || !found.redisUrl || !found.kafkaBrokers;
  if (missing && dockerAvailable()) {
    const tc = await import("testcontainers");
    if (!found.databaseUrl) {
      const pg = await new tc.GenericContainer("postgres:16-alpine")
        .withEnvironment({ POSTGRES_PASSWORD: "postgres" })
        .withExposedPorts(5432)
        .withWaitStrategy(tc.Wait.forLogMessage(/ready to accept connections/, 2))
        .start();
      found.databaseUrl = `postgresql://postgres:postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`;
      stops.push(async () => void (await pg.stop()));
    }
    if (!found.redisUrl) {
      const redis = await new tc.GenericContainer("redis:7-alpine").withExposedPorts(6379).start();
      found.redisUrl = `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`;
      stops.push(async () => void (await redis.stop()));
    }
    if (!found.kafkaBrokers) {
      const kafka = await new tc.GenericContainer("apache/kafka:3.9.1")
        .withExposedPorts({ container: 9092, host: 39092 })
        .withEnvironment({ KAFKA_ADVERTISED_LISTENERS: "PLAINTEXT://127.0.0.1:39092,CONTROLLER://localhost:9093" })
        .withWaitStrategy(tc.Wait.forLogMessage(/Kafka Server started/))
        .start();
      found.kafkaBrokers = "127.0.0.1:39092";
      stops.push(async () => void (await kafka.stop()));
    }
  }
  if (!found.databaseUrl && (await portOpen(5432))) found.databaseUrl = "postgresql://postgres@127.0.0.1:5432/postgres";
  if (!found.redisUrl && (await portOpen(6379))) found.redisUrl = "redis://127.0.0.1:6379";
  if (!found.kafkaBrokers && hasCommand("kcat")) {
    const mock = await startKafkaMock();
    found.kafkaBrokers = mock.brokers;
    found.kafkaIsMock = true;
    stops.push(async () => {
      try {
        process.kill(-mock.process.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    });
  }
  log(`test infrastructure: postgres=${found.databaseUrl ? "yes" : "NO"} redis=${found.redisUrl ? "yes" : "NO"} kafka=${found.kafkaBrokers ?? "NO"}`);
  return {
    ...found,
    stop: async () => {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
