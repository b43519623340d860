// `pnpm --filter @crm/<service> db:deploy`: applies a service's pending migrations to DATABASE_URL.
// The distributed deployment runs this once per release before starting the service
// (embedded mode applies migrations at start instead).
import path from "node:path";
import { Client } from "pg";
import { applyMigrations } from "../migrations";

async function main(): Promise<void> {
  const [schema, migrationsDir = "prisma/migrations"] = process.argv.slice(2);
  const url = process.env.DATABASE_URL;
  if (!schema) throw new Error("usage: deploy.ts <schema> [migrations-dir]");
  if (!url) throw new Error("Invalid configuration: DATABASE_URL: required for db:deploy");
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const ran = await applyMigrations(
      { exec: (sql) => client.query(sql), query: async <T>(sql: string, params?: unknown[]) => ({ rows: (await client.query(sql, params)).rows as T[] }) },
      schema,
      path.resolve(migrationsDir),
    );
    console.log(ran.length === 0 ? `${schema}: up to date` : `${schema}: applied ${ran.join(", ")}`);
  } finally {
    await client.end();
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
