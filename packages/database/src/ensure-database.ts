// `pnpm start:distributed` gives each service its own database on one PostgreSQL server and creates
// them on first start. Names are checked, not quoted blindly: they come from configuration.
import { Client } from "pg";

const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Creates database `name` on the server `adminUrl` connects to, unless it exists; returns that database's URL. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<{ url: string; created: boolean }> {
  if (!DATABASE_NAME.test(name)) throw new Error(`invalid database name "${name}": lower-case letters, digits and _, at most 63`);
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  let created = false;
  try {
    const exists = await client.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (exists.rowCount === 0) {
      try {
        await client.query(`CREATE DATABASE "${name}"`);
        created = true;
      } catch (err) {
        // Another starter created it between the two statements.
        if ((err as { code?: string }).code !== "42P04") throw err;
      }
    }
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), created };
}
