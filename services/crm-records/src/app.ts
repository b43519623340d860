import { type Express, Router } from "express";
import { AuditCursorCodec, internalAuditRouter } from "@crm/audit";
import type { RecordEntity } from "@crm/contracts";
import type { SqlRunner } from "@crm/database";
import type { Logger } from "@crm/logger";
import { createServiceApp, type ReadinessCheck, type ServiceAppDevices } from "@crm/service-kit";
import { entityDefinitions } from "./entities";
import { createRecordsRouter } from "./http/records.router";
import type { PrismaClient } from "./persistence/prisma";
import { FeedService } from "./application/feed.service";
import { FeedWaiters } from "./application/feed-waiters";
import { type RecordDevices, RecordService } from "./application/record.service";
import { TrashService } from "./application/trash.service";
import { feedRouter } from "./http/feed.router";
import { historyRouter } from "./http/history.router";
import { FeedStore } from "./persistence/feed.store";
import { CustomFieldStore } from "./persistence/custom-field.store";
import { statementRunner } from "./persistence/record-reads";
import { CustomFieldCache } from "./application/custom-field-cache";
import { CustomFieldService } from "./application/custom-field.service";
import { createCustomFieldsRouter } from "./http/custom-fields.router";
import { recordSchemaRouter } from "./http/record-schema.router";

export interface AppDeps {
  logger: Logger;
  prisma: PrismaClient;
  internalTokenSecret: string;
  /** Database and bus checks for /readyz. */
  readiness?: ReadinessCheck[];
  /** Called after each committed write, so the outbox relay publishes at once. */
  onCommitted?: () => void;
  /** The database driver, for list statements and one-statement creates (RecordServiceOptions.sql). */
  sql: SqlRunner;
  /** True on PostgreSQL: a list reads its page and total at once (see RecordServiceOptions). */
  parallelQueries?: boolean;
  /** Most related records per parent and to-many relation in a response (INCLUDE_MAX_PER_RELATION). */
  includeMaxPerRelation?: number;
  /** The change feed's waiting requests, woken when events become readable (extensions §E6). */
  feedWaiters?: FeedWaiters;
  /** Tuning devices turned off (RECORDS_* settings, config.ts). */
  devices?: Partial<RecordDevices>;
  /** Tuning devices of the service app turned off (serviceAppDevicesOf of the configuration). */
  appDevices?: ServiceAppDevices;
}

/** The crm-records HTTP app, not listening (tests drive it in-process). */
export function createApp(deps: AppDeps): Express {
  const customFieldStore = new CustomFieldStore(deps.prisma, statementRunner(deps.sql));
  const customFieldCache = new CustomFieldCache(customFieldStore);
  const service = new RecordService({
    customFields: customFieldCache,
    prisma: deps.prisma,
    definitions: entityDefinitions,
    onCommitted: deps.onCommitted,
    parallelQueries: deps.parallelQueries,
    includeMaxPerRelation: deps.includeMaxPerRelation,
    cursorSecret: deps.internalTokenSecret,
    sql: deps.sql,
    devices: deps.devices,
  });
  const feed = new FeedService(new FeedStore(deps.sql), deps.feedWaiters ?? new FeedWaiters(), deps.internalTokenSecret, entityDefinitions, customFieldCache);
  const customFields = new CustomFieldService(customFieldStore, customFieldCache, entityDefinitions);
  const api = Router();
  api.use(feedRouter(feed));
  const trash = new TrashService({ prisma: deps.prisma, definitions: entityDefinitions, onCommitted: deps.onCommitted, customFields: customFieldCache });
  // Before the records' routes: /{entity}/fields and /{entity}/schema are never a record id (extensions §E4).
  api.use(createCustomFieldsRouter(customFields, Object.keys(entityDefinitions) as RecordEntity[]));
  api.use(recordSchemaRouter(customFieldCache, Object.keys(entityDefinitions) as RecordEntity[]));
  api.use(createRecordsRouter(service, trash, entityDefinitions));
  api.use(historyRouter(deps.prisma, new AuditCursorCodec(deps.internalTokenSecret), Object.values(entityDefinitions)));
  return createServiceApp({
    logger: deps.logger,
    internalTokenSecret: deps.internalTokenSecret,
    readiness: deps.readiness ?? [],
    api,
    internal: internalAuditRouter(deps.prisma, "records"),
    devices: deps.appDevices,
  });
}
