import path from "node:path";
import { defineConfig } from "prisma/config";

// Offline machines cannot download Prisma's native schema engine; `prisma generate` only needs the
// path to exist. Migrations are applied by @crm/database's runner, not by the native engine.
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.resolve(__dirname, "../../infra/prisma/no-native-schema-engine.sh");

export default defineConfig({
  schema: "prisma/schema.prisma",
  migrations: { path: "prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://localhost:5432/placeholder" },
});
