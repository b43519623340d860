export { openDatabase, applyMigrations } from "./database";
export type { Database, DatabaseOptions, DriverAdapter } from "./database";
export type { SqlRunner } from "./migrations";
