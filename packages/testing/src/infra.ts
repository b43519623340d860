// Where the distributed-mode tests find PostgreSQL, Redis and Kafka, in this order:
// 1. DATABASE_URL / REDIS_URL / KAFKA_BROKERS from the environment;
// 2. containers started by testcontainers, where a Docker engine answers;
// 3. PostgreSQL and Redis on their default loopback ports, and librdkafka's mock cluster (Debian `kcat`).
// The answers are written to process.env by jest's global setup, so every worker sees the same ones.
import { execFileSync } from "node:child_process";
import net from "node:net";
import { hasKcat, startKafkaMock, stopKafkaMock } from "@crm/kafka-mock";

export { startKafkaMock } from "@crm/kafka-mock";

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
  if (!found.kafkaBrokers && hasKcat()) {
    const mock = await startKafkaMock();
    found.kafkaBrokers = mock.brokers;
    found.kafkaIsMock = true;
    stops.push(async () => stopKafkaMock(mock));
  }
  log(`test infrastructure: postgres=${found.databaseUrl ? "yes" : "NO"} redis=${found.redisUrl ? "yes" : "NO"} kafka=${found.kafkaBrokers ?? "NO"}`);
  return {
    ...found,
    stop: async () => {
      for (const stop of stops.reverse()) await stop();
    },
  };
}
