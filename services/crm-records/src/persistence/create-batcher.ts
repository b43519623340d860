// One-record creates of an entity that arrive while its earlier creates are still being written go
// to the database together, as one statement (record-insert.ts, insertCoalescedStatement), the way
// PostgreSQL's group commit shares a WAL flush between transactions.
//
// Measured (docs/performance.md, "Webhook delivery"): in embedded mode PGlite's one thread is the
// product's ceiling, and most of a one-record create statement's cost there is the statement's own
// (a create alone ~0.4-0.55 ms of the thread; in the delivery bench, ~3.4 creates a statement at
// ~1.15-1.3 ms each). A create that finds nothing of its entity in flight is sent at once, so an
// unloaded service answers as before; under load a create waits at most for the statement ahead of
// it, which it would have queued behind anyway.
//
// Every caller still gets its own outcome. A statement is atomic, so a batch the database refused
// wrote nothing, and its records are then written one statement each: a record that is refused (a
// foreign key) is refused alone, as it would have been, and the others are written. An error that
// did not come from the database (a lost connection: the statement may have committed) is every
// caller's, as it would have been for each on its own; nothing is written twice.
import type { EntityDefinition } from "../entities";
import { type InsertEntry, type InsertStatement, insertCoalescedStatement, insertRecordStatement } from "./record-insert";

export interface CreateBatcherOptions {
  /** Runs one statement (autocommit). */
  run(statement: InsertStatement): Promise<unknown>;
  /** Statements of one entity in flight at once; creates beyond them wait and go together. */
  inFlight: number;
  /** Most records in one statement (each length is one prepared text per connection). */
  maxBatch: number;
}

interface Waiting {
  entry: InsertEntry;
  resolve(): void;
  reject(err: unknown): void;
}

interface Lane {
  definition: EntityDefinition;
  waiting: Waiting[];
  running: number;
}

/** True when PostgreSQL itself refused the statement (an ErrorResponse with a SQLSTATE): it then wrote nothing. */
export function refusedByDatabase(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  // Class 08 is the connection's: whether the statement committed is unknown.
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) && !code.startsWith("08");
}

export class CreateBatcher {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly options: CreateBatcherOptions) {}

  /** Resolves once the record, its event and its count are committed; rejects with this record's own error. */
  create(definition: EntityDefinition, entry: InsertEntry): Promise<void> {
    let lane = this.lanes.get(definition.entity);
    if (!lane) {
      lane = { definition, waiting: [], running: 0 };
      this.lanes.set(definition.entity, lane);
    }
    const done = new Promise<void>((resolve, reject) => lane.waiting.push({ entry, resolve, reject }));
    if (lane.running < this.options.inFlight) this.send(lane);
    return done;
  }

  private send(lane: Lane): void {
    const batch = lane.waiting.splice(0, this.options.maxBatch);
    lane.running += 1;
    void this.write(lane.definition, batch).finally(() => {
      lane.running -= 1;
      if (lane.waiting.length > 0) this.send(lane);
    });
  }

  private async write(definition: EntityDefinition, batch: Waiting[]): Promise<void> {
    if (batch.length === 1) return this.writeOne(definition, batch[0]!);
    try {
      await this.options.run(
        insertCoalescedStatement(
          definition,
          batch.map((w) => w.entry),
        ),
      );
    } catch (err) {
      if (!refusedByDatabase(err)) {
        for (const waiting of batch) waiting.reject(err);
        return;
      }
      // Nothing was written: each record on its own, so only the refused ones fail.
      for (const waiting of batch) await this.writeOne(definition, waiting);
      return;
    }
    for (const waiting of batch) waiting.resolve();
  }

  private async writeOne(definition: EntityDefinition, waiting: Waiting): Promise<void> {
    const { data, row, event, traceparent } = waiting.entry;
    try {
      await this.options.run(insertRecordStatement(definition, data, row, event, traceparent));
      waiting.resolve();
    } catch (err) {
      waiting.reject(err);
    }
  }
}
