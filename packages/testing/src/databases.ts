import { randomBytes } from "node:crypto";
import { Client } from "pg";

/** The distributed-mode infrastructure found by global setup, or undefined when absent. */
export const testInfra = {
  databaseUrl: process.env.TEST_DATABASE_URL,
  redisUrl: process.env.TEST_REDIS_URL,
  kafkaBrokers: process.env.TEST_KAFKA_BROKERS,
  /** kafkaBrokers is a mock cluster of our own: a test that needs a cluster to itself may start another (startKafkaMock). */
  kafkaIsMock: process.env.TEST_KAFKA_IS_MOCK === "1",
};

/** jest's `describe`, or its skipping twin; outside jest (the benchmarks load the e2e harness) neither exists. */
function describeIf(available: boolean): jest.Describe {
  if (typeof describe === "undefined") return undefined as unknown as jest.Describe;
  return available ? describe : describe.skip;
}

/** `describe` when PostgreSQL, Redis and Kafka are all available, else a loudly skipped block. */
export const describeDistributed: jest.Describe = describeIf(Boolean(testInfra.databaseUrl && testInfra.redisUrl && testInfra.kafkaBrokers));

/** `describe` when PostgreSQL is available. */
export const describePostgres: jest.Describe = describeIf(Boolean(testInfra.databaseUrl));

/**
 * A fresh, uniquely named database on the test server (a copy of database `template` when given);
 * dropped by the returned function.
 */
export async function createTestDatabase(prefix = "crm_test", template?: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = testInfra.databaseUrl;
  if (!admin) throw new Error("no test PostgreSQL (TEST_DATABASE_URL)");
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ""}`);
    // Inside jest, commits need not wait for the disk: a test database never outlives a crash, and
    // every test commits often. Atomicity and visibility are the same. Benchmarks (outside jest) keep the server's setting.
    if (process.env.JEST_WORKER_ID !== undefined) await client.query(`ALTER DATABASE "${name}" SET synchronous_commit = off`);
  } finally {
    await client.end();
  }
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const c = new Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * pg's pool.end() resolves before its sockets have closed; dropping the database at that moment
 * (WITH FORCE) would terminate those backends and surface as an unhandled error in a later test.
 */
export async function waitForDisconnects(url: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  const admin = new Client({ connectionString: testInfra.databaseUrl });
  await admin.connect();
  try {
    for (let i = 0; i < 100; i++) {
      const { rows } = await admin.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1", [name]);
      if (rows[0]?.n === 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await admin.end();
  }
}

/** Drops the named databases of the test server (ones a test had something else create). */
export async function dropDatabases(names: readonly string[]): Promise<void> {
  const admin = testInfra.databaseUrl;
  if (!admin) return;
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    for (const name of names) await client.query(`DROP DATABASE IF EXISTS "${name.replace(/"/g, '""')}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Random names so tests never share topics, groups or businesses. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(5).toString("hex")}`;
}

/**
 * Terminates every connection to the given test databases (pg_terminate_backend), as a failover or an
 * operator would; only these databases: the server is shared. How many were terminated.
 */
export async function terminateConnections(databases: readonly string[]): Promise<number> {
  const admin = testInfra.databaseUrl;
  if (!admin) throw new Error("no test PostgreSQL (TEST_DATABASE_URL)");
  const client = new Client({ connectionString: admin });
  await client.connect();
  try {
    const { rowCount } = await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ANY($1) AND pid <> pg_backend_pid()", [databases]);
    return rowCount ?? 0;
  } finally {
    await client.end();
  }
}
