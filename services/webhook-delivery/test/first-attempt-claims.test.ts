// The claims of first attempts read the partial first-attempts index whatever the last ANALYZE saw
// (migration 20261126170000_first_attempts_index_only). Their prepared statements' generic plans are
// chosen again after every ANALYZE; when it had seen no PENDING row, PostgreSQL read every business's
// due first attempts through ("status", "nextRetryAt") and sorted them, for each claim of a few rows
// (docs/performance.md, D23: 328,052 index entries read in two bench runs before it).
import { openTestDatabase } from "@crm/testing";
import { databaseModes } from "./support/harness";
import { MIGRATIONS_DIR } from "./support/migrations";
import { type CapturedStatement, capturingRepository, genericPlan, seedDeliveredHistory, seedWorkOwed } from "./support/plans";

/** The text and values of the claims of first attempts, captured without running them. */
async function firstAttemptClaims(now: Date): Promise<CapturedStatement[]> {
  const { repository, sent } = capturingRepository();
  const leaseUntil = new Date(now.getTime() + 30_000);
  await repository.claimDue({ now, leaseUntil, limit: 20, firstAttemptsOf: "claims-b3" });
  await repository.claimFirstAttempts({ now, leaseUntil, limit: 20, perBusiness: 5, held: new Map() });
  return sent;
}

describe.each(databaseModes)("the claims of first attempts on %s", (mode) => {
  it("read the first-attempts index, whether the last ANALYZE saw first attempts or not", async () => {
    // One connection: the session setting and the prepared statement must be where EXPLAIN runs.
    const { database: db, close } = await openTestDatabase(mode, { prefix: "webhooks_test", schema: "webhooks", migrationsDir: MIGRATIONS_DIR, poolSize: 1 });
    try {
      const sql = db.sql;
      await sql.query("SET plan_cache_mode = force_generic_plan");
      // Businesses whose deliveries were created PENDING and then delivered, as the product does: the
      // first-attempts index keeps its entries of the PENDING versions until VACUUM.
      await seedDeliveredHistory(sql, "claims-b");
      const backlog = (tag: string) => seedWorkOwed(sql, { business: "claims-b3", tag, events: 50, status: "PENDING" });
      const expectFirstAttemptsIndex = async () => {
        for (const statement of await firstAttemptClaims(new Date())) {
          const plan = await genericPlan(sql, statement);
          expect({ statement: statement.name, first: plan.includes('"Index Name":"Delivery_first_attempts_by_business_idx"') }).toEqual({ statement: statement.name, first: true });
          expect({ statement: statement.name, status: plan.includes("Delivery_status_nextRetryAt_idx") }).toEqual({ statement: statement.name, status: false });
        }
      };

      // ANALYZE saw no first attempt (the bench's, after its warm-up), then a backlog came.
      await sql.exec(`ANALYZE webhooks."Delivery"`);
      await backlog("before");
      await expectFirstAttemptsIndex();
      // ANALYZE saw the backlog.
      await sql.exec(`ANALYZE webhooks."Delivery"`);
      await backlog("after");
      await expectFirstAttemptsIndex();
    } finally {
      await close();
    }
  }, 120_000);
});
