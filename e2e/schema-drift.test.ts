// The schema is the truth (issue 36 item 4): for every service, `pnpm db:migration services/<svc> check`
// (Prisma's diff from the migrations, applied to a shadow database, to schema.prisma) finds no drift, so
// a migration generated from schema.prisma never undoes what the migrations built. What Prisma cannot
// express is declared in each schema.prisma (a column kept by a trigger, the partial indexes its comments
// name), never left for the check to trip over.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describePostgres, testInfra } from "@crm/testing";

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, "..");
const SERVICES = readdirSync(path.join(ROOT, "services")).filter((s) => {
  try {
    return readdirSync(path.join(ROOT, "services", s, "prisma/migrations")).length > 0;
  } catch {
    return false;
  }
});

/** The check's exit status and output; the shadow database needs a role with CREATEDB. */
async function check(serviceDir: string): Promise<{ status: number; output: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(ROOT, "infra/prisma/prisma-migrate.mjs"), serviceDir, "check"], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: testInfra.databaseUrl },
    });
    return { status: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { status: e.code ?? -1, output: `${e.stdout ?? ""}${e.stderr ?? ""}` };
  }
}

describePostgres("schema drift", () => {
  it("covers every service with migrations", () => {
    expect(SERVICES.sort()).toEqual(["crm-records", "identity", "webhook-delivery"]);
  });

  it.each(SERVICES)(
    "services/%s: schema.prisma matches its migrations",
    async (service) => {
      const res = await check(`services/${service}`);
      expect(res.output).toMatch(/No difference detected/);
      expect(res.status).toBe(0);
    },
    180_000,
  );

  it("fails when schema.prisma has a change without a migration", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "crm-drift-"));
    try {
      cpSync(path.join(ROOT, "services/identity/prisma"), path.join(dir, "prisma"), { recursive: true });
      const schema = path.join(dir, "prisma/schema.prisma");
      writeFileSync(schema, readFileSync(schema, "utf8").replace(/(model User \{\n)/, "$1  driftProbe String?\n"));
      expect(readFileSync(schema, "utf8")).toContain("driftProbe");
      const res = await check(dir);
      expect(res.output).toMatch(/schema\.prisma has changes without a migration/);
      expect(res.status).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
