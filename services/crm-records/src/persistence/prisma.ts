// The generated client, and the loose view of a record model the generic service works through.
import { Prisma, PrismaClient } from "../generated/prisma/client";
import type { DriverAdapter } from "@crm/database";
import type { Row } from "../domain/record.serializer";
import type { RecordDelegateName } from "../entities";

export { Prisma, PrismaClient };
export type Tx = Prisma.TransactionClient;

export function createPrismaClient(adapter: DriverAdapter): PrismaClient {
  // Generous waits: in embedded mode every transaction queues for PGlite's single connection.
  return new PrismaClient({ adapter, transactionOptions: { maxWait: 15_000, timeout: 30_000 } });
}

/**
 * The subset of a Prisma model delegate the generic service uses. The seven record delegates share
 * this shape but not one TypeScript type, so they are reached by name through this view; every call
 * site builds its arguments from the entity definition, which mirrors schema.prisma.
 */
export interface RecordDelegate {
  findFirst(args: object): Promise<Row | null>;
  findMany(args: object): Promise<Row[]>;
  count(args: object): Promise<number>;
  create(args: object): Promise<Row>;
  update(args: object): Promise<Row>;
  delete(args: object): Promise<Row>;
  deleteMany(args: object): Promise<{ count: number }>;
}

export function delegateOf(client: PrismaClient | Tx, name: RecordDelegateName): RecordDelegate {
  return (client as unknown as Record<RecordDelegateName, RecordDelegate>)[name]!;
}

export function isPrismaError(err: unknown, code: string): boolean {
  return err instanceof Prisma.PrismaClientKnownRequestError && err.code === code;
}

/**
 * A foreign key refused a raw statement: sent through the driver (pg and PGlite report SQLSTATE
 * 23503 as `code`), or through Prisma (P2003, or P2010 with the driver's cause).
 */
export function isForeignKeyViolation(err: unknown): boolean {
  if ((err as { code?: unknown } | null)?.code === "23503") return true;
  if (isPrismaError(err, "P2003")) return true;
  if (!isPrismaError(err, "P2010")) return false;
  const cause = ((err as InstanceType<typeof Prisma.PrismaClientKnownRequestError>).meta?.["driverAdapterError"] as { cause?: { kind?: string } } | undefined)?.cause;
  return cause?.kind === "ForeignKeyConstraintViolation";
}
