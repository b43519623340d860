// A record's client reference (contacts, invoices, quotes): a UUID naming a live client of the
// caller's business, read `FOR KEY SHARE` so the client cannot go to the trash before the write
// commits (knownClients). Creates and updates check it here; the one-statement create's statement
// checks it itself (record-insert.ts).
import { isUuid } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { EntityDefinition } from "../entities";
import { type Input, unknownClient } from "../domain/record-input";
import type { PrismaClient, Tx } from "../persistence/prisma";
import { knownClients } from "../persistence/record-writes";

/** One body's client reference: a UUID (else 400001 at its path) and, with `lookUp`, a client of the business. */
export async function checkClientReference(db: PrismaClient | Tx, definition: EntityDefinition, businessId: string, input: Input, lookUp: boolean): Promise<void> {
  const field = definition.clientReference;
  if (!field || input[field] === undefined) return;
  const clientId = input[field];
  if (typeof clientId !== "string" || !isUuid(clientId)) throw unknownClient();
  if (lookUp && (await knownClients(db, businessId, [clientId])).size === 0) throw unknownClient();
}

/** A batch's client references in one query; each unknown one (or another business's) named by its item. */
export async function checkClientReferences(db: PrismaClient | Tx, definition: EntityDefinition, businessId: string, inputs: readonly Input[]): Promise<void> {
  const field = definition.clientReference;
  if (!field) return;
  const wanted = inputs.map((input) => input[field]);
  const candidates = [...new Set(wanted.filter((v): v is string => typeof v === "string" && isUuid(v)).map((v) => v.toLowerCase()))];
  const known = await knownClients(db, businessId, candidates);
  const details = wanted.flatMap((value, i) =>
    value === undefined || (typeof value === "string" && known.has(value.toLowerCase())) ? [] : [{ path: `items.${i}.${field}`, message: "Unknown client" }],
  );
  if (details.length > 0) throw errors.validationFailed(details);
}
