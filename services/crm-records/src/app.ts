import type { Express } from "express";
import type { SqlRunner } from "@crm/database";
import type { Logger } from "@crm/logger";
import { createServiceApp, type ReadinessCheck } from "@crm/service-kit";
import { entityDefinitions } from "./entities";
import { createRecordsRouter } from "./http/records.router";
import type { PrismaClient } from "./persistence/prisma";
import { RecordService } from "./application/record.service";

export interface AppDeps {
  logger: Logger;
  prisma: PrismaClient;
  internalTokenSecret: string;
  /** Database and bus checks for /readyz. */
  readiness?: ReadinessCheck[];
  /** Called after each committed write, so the outbox relay publishes at once. */
  onCommitted?: () => void;
  /** The database driver, for list statements (RecordServiceOptions.sql). */
  sql?: SqlRunner;
  /** True on PostgreSQL: a list reads its page and total at once (see RecordServiceOptions). */
  parallelQueries?: boolean;
  /** Most related records per parent and to-many relation in a response (INCLUDE_MAX_PER_RELATION). */
  includeMaxPerRelation?: number;
}

/** The crm-records HTTP app, not listening (tests drive it in-process). */
export function createApp(deps: AppDeps): Express {
  const service = new RecordService({
    prisma: deps.prisma,
    definitions: entityDefinitions,
    onCommitted: deps.onCommitted,
    parallelQueries: deps.parallelQueries,
    includeMaxPerRelation: deps.includeMaxPerRelation,
    cursorSecret: deps.internalTokenSecret,
    sql: deps.sql,
  });
  return createServiceApp({
    logger: deps.logger,
    internalTokenSecret: deps.internalTokenSecret,
    readiness: deps.readiness ?? [],
    api: createRecordsRouter(service, entityDefinitions),
  });
}
