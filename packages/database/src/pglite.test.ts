import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createPglite, ensureTemplate, templatePath } from "./pglite";

describe("embedded PGlite", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "crm-pglite-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("starts a fresh data directory from the build's initdb template, with the product's settings", async () => {
    await ensureTemplate();
    expect(existsSync(templatePath())).toBe(true);
    const pglite = await createPglite(path.join(dir, "pglite"));
    try {
      expect((await pglite.query<{ shared_buffers: string }>("SHOW shared_buffers")).rows[0]?.shared_buffers).toBe("32MB");
      await pglite.exec("CREATE TABLE t (id int primary key, name text); INSERT INTO t VALUES (1, 'a')");
      expect((await pglite.query<{ name: string }>("SELECT name FROM t")).rows).toEqual([{ name: "a" }]);
    } finally {
      await pglite.close();
    }
    expect(existsSync(path.join(dir, "pglite", "PG_VERSION"))).toBe(true);
    // Reopened, the data is kept (the template is only for an empty directory).
    const again = await createPglite(path.join(dir, "pglite"));
    try {
      expect((await again.query<{ name: string }>("SELECT name FROM t")).rows).toEqual([{ name: "a" }]);
    } finally {
      await again.close();
    }
  });
});
