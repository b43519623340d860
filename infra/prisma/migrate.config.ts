// Config for the Prisma 6.19 CLI ("prisma-migrate-engine" alias), used only to create migrations
// and check drift (its wasm schema engine runs offline over a driver adapter). The app uses Prisma 7.
import type { PrismaConfig } from "prisma-migrate-engine";
import { migrateAdapter } from "./migrate-adapter";

const url = process.env.DATABASE_URL;
if (!url) throw new Error("DATABASE_URL is not set");

export default {
  experimental: { adapter: true },
  engine: "js",
  adapter: async () => migrateAdapter(url),
  schema: process.env.PRISMA_MIGRATE_SCHEMA!,
  migrations: { path: process.env.PRISMA_MIGRATE_MIGRATIONS! },
} satisfies PrismaConfig;
