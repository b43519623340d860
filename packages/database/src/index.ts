export { openDatabase, applyMigrations } from "./database";
export { ensureDatabase } from "./ensure-database";
export type { Database, DatabaseOptions, DriverAdapter } from "./database";
export type { SqlRunner } from "./migrations";
export { listenForNotifications, type NotificationListenerOptions } from "./notification-listener";
export { runsOutsideTransaction, splitStatements } from "./migrations";
