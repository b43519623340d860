// A COMMIT whose connection was lost before its answer came: committed or not? PostgreSQL knows, by
// the transaction's id (txid_status, made for this very case), as soon as the transaction has ended.
// Asked on a fresh connection, for a bounded time, so the service can answer as if nothing happened
// (committed) or as a plain 503000 (not committed, safe to retry) rather than leave the doubt.
import pg from "pg";

/** How long a request waits at most for a lost COMMIT to be settled (issue 42: about 2 s). */
export const SETTLE_BUDGET_MS = 2_000;
const POLL_MS = 100;

export type CommitOutcome = "committed" | "aborted" | "unknown";

/** The transaction whose COMMIT was lost: its id (txid_current's 64-bit form) and its backend's pid. */
export interface LostCommit {
  xid: string;
  pid: number;
}

/** txid_status's answer as an outcome; undefined while the transaction is still open. */
export function outcomeOfTransactionStatus(status: string | null): CommitOutcome | undefined {
  if (status === "committed") return "committed";
  if (status === "aborted") return "aborted";
  if (status === "in progress") return undefined;
  return "unknown"; // null: too old for the server to remember (not within seconds)
}

/** The 32-bit xid that pg_stat_activity shows for a 64-bit transaction id. */
export function shortXid(xid: string): string {
  return String(BigInt(xid) % 2n ** 32n);
}

/**
 * Settles a lost COMMIT within `budgetMs`. A transaction still open means its backend has not seen the
 * COMMIT (lost on the way, or on its way still) nor the connection's end: ending that backend
 * (only it, checked by pid and transaction id) rolls the transaction back unless it commits first, and
 * either way the next look tells. "unknown" when the database cannot be reached in time.
 */
export async function settleLostCommit(config: pg.ClientConfig, lost: LostCommit, budgetMs = SETTLE_BUDGET_MS): Promise<CommitOutcome> {
  const deadline = Date.now() + budgetMs;
  let terminated = false;
  while (Date.now() < deadline) {
    try {
      const outcome = await onFreshClient(config, deadline - Date.now(), async (client) => {
        const { rows } = await client.query<{ status: string | null }>("SELECT txid_status($1::bigint) AS status", [lost.xid]);
        const known = outcomeOfTransactionStatus(rows[0]?.status ?? null);
        if (known === undefined && !terminated) {
          terminated = true;
          await client.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1 AND backend_xid::text = $2", [lost.pid, shortXid(lost.xid)]);
        }
        return known;
      });
      if (outcome !== undefined) return outcome;
    } catch {
      // The database does not answer (yet): look again until the budget is spent.
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(POLL_MS, deadline - Date.now()))));
  }
  return "unknown";
}

async function onFreshClient<T>(config: pg.ClientConfig, budgetMs: number, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const timeout = Math.max(1, Math.ceil(budgetMs));
  const client = new pg.Client({ ...config, connectionTimeoutMillis: timeout, query_timeout: timeout });
  client.on("error", () => undefined);
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
