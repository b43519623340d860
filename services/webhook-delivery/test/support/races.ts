// For tests of two transactions racing on PostgreSQL (the triggers that replaced foreign keys): three
// connections on a fresh, migrated database with one webhook, and a way to tell that a statement is
// blocked on a lock.
import { createTestDatabase } from "@crm/testing";
import { Client } from "pg";
import type { CreatedForEvents, DeliveryRepository } from "../../src/persistence/delivery.repository";
import { insertWebhookRow, migratedRepository } from "./migrations";

export const RACE_BUSINESS = "race";

export interface Race {
  /** The connection the repository runs on. */
  writer: Client;
  /** The other transaction. */
  deleter: Client;
  /** Reads pg_stat_activity while the other two wait. */
  observer: Client;
  repository: DeliveryRepository;
}

/** Runs `work` on a fresh database (named after `prefix`) with every migration and webhook `hookId` of RACE_BUSINESS. */
export async function withRace(prefix: string, hookId: string, work: (race: Race) => Promise<void>): Promise<void> {
  const db = await createTestDatabase(prefix);
  const [writer, deleter, observer] = [0, 1, 2].map(() => new Client({ connectionString: db.url })) as [Client, Client, Client];
  try {
    for (const c of [writer, deleter, observer]) await c.connect();
    const repository = await migratedRepository(writer);
    await insertWebhookRow(writer, hookId, RACE_BUSINESS);
    await work({ writer, deleter, observer, repository });
  } finally {
    for (const c of [writer, deleter, observer]) await c.end().catch(() => undefined);
    await db.drop();
  }
}

/** The consumer's create for one event ("race-1") of RACE_BUSINESS, with room for one leased delivery. */
export function createRaceEvent(repository: DeliveryRepository): Promise<CreatedForEvents> {
  const now = new Date();
  return repository.createForEvents([{ eventId: "race-1", businessId: RACE_BUSINESS, event: "client.created", payload: "{}" }], now, {
    leaseUntil: new Date(now.getTime() + 60_000),
    limits: new Map([[RACE_BUSINESS, 1]]),
  });
}

/** Waits (bounded) until `client`'s backend waits for a lock: its statement is blocked. */
export async function waitUntilBlocked(observer: Client, client: Client): Promise<void> {
  const pid = (client as unknown as { processID: number }).processID;
  for (let i = 0; i < 200; i++) {
    const { rows } = await observer.query<{ waiting: boolean }>(`SELECT wait_event_type = 'Lock' AS waiting FROM pg_stat_activity WHERE pid = $1`, [pid]);
    if (rows[0]?.waiting) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`backend ${pid} never waited for a lock`);
}
