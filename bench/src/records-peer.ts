// The hand-written peer of issue 9: Fastify + pg, no auth, no ORM, no hop. It serves exactly the
// requests the benchmark sends, with the same SQL on the same rows (its own copy, schema `peer`)
// and the same response shape as the product. The business comes from a header instead of a token.
import Fastify, { type FastifyInstance } from "fastify";
import { Pool } from "pg";
import { uuidv7 } from "@crm/contracts";

const COLUMNS = `id, "businessId", "firstName", "lastName", email, phone, "companyName", notes, "isActive", "createdAt", "updatedAt"`;

function meta(total: number, page: number, perPage: number) {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  return { total, lastPage, currentPage: page, perPage, prev: page > 1 ? page - 1 : null, next: page < lastPage ? page + 1 : null };
}

export async function startPeer(databaseUrl: string, poolSize: number): Promise<{ url: string; close(): Promise<void> }> {
  const pool = new Pool({ connectionString: databaseUrl, max: poolSize });
  const app: FastifyInstance = Fastify({ logger: false });

  app.get("/api/v1/client", async (req) => {
    const q = req.query as Record<string, string | undefined>;
    const businessId = req.headers["x-business-id"] as string;
    const perPage = Number(q.perPage ?? 20);
    const page = Number(q.page ?? 1);
    const activeOnly = q.where === "isActive:bool(true)";
    const filter = activeOnly ? `"businessId" = $1 AND "isActive" = true` : `"businessId" = $1`;
    const order = q.orderBy === "lastName:asc" ? `"lastName" ASC, id ASC` : `"createdAt" DESC, id DESC`;
    const [rows, count] = await Promise.all([
      pool.query(`SELECT ${COLUMNS} FROM peer.client WHERE ${filter} ORDER BY ${order} LIMIT $2 OFFSET $3`, [businessId, perPage, (page - 1) * perPage]),
      pool.query<{ total: number }>(`SELECT count(*)::int AS total FROM peer.client WHERE ${filter}`, [businessId]),
    ]);
    return { success: true, data: rows.rows, meta: meta(count.rows[0]!.total, page, perPage) };
  });

  app.post("/api/v1/client", async (req, reply) => {
    const body = req.body as Record<string, unknown>;
    const businessId = req.headers["x-business-id"] as string;
    const db = await pool.connect();
    try {
      await db.query("BEGIN");
      const inserted = await db.query(`INSERT INTO peer.client (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now()) RETURNING ${COLUMNS}`, [
        uuidv7(),
        businessId,
        body.firstName,
        body.lastName,
        body.email ?? null,
        body.phone ?? null,
        body.companyName ?? null,
        body.notes ?? null,
        body.isActive ?? true,
      ]);
      const record = inserted.rows[0];
      const event = { id: uuidv7(), type: "client.created", businessId, occurredAt: new Date().toISOString(), version: 1, data: record };
      await db.query(`INSERT INTO peer.outbox (id, topic, key, payload) VALUES ($1, 'crm.records.v1', $2, $3)`, [event.id, businessId, JSON.stringify(event)]);
      await db.query("COMMIT");
      reply.code(201);
      return { success: true, data: record };
    } catch (err) {
      await db.query("ROLLBACK");
      throw err;
    } finally {
      db.release();
    }
  });

  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  return {
    url: address,
    close: async () => {
      await app.close();
      await pool.end();
    },
  };
}

// Run as its own process (`tsx records-peer.ts <databaseUrl> <poolSize>`), so it never shares an
// event loop with the load generator; prints its address on the first line of stdout.
if (require.main === module) {
  const [databaseUrl, poolSize] = process.argv.slice(2);
  void startPeer(databaseUrl!, Number(poolSize ?? 10)).then((peer) => {
    process.stdout.write(`${peer.url}\n`);
    process.once("SIGTERM", () => void peer.close().then(() => process.exit(0)));
  });
}
