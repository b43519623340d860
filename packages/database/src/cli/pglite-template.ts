// Run by `pnpm build`: makes the initialised PGlite data directory a fresh embedded database starts
// from (see ../pglite.ts), once per PGlite version.
import { ensureTemplate, templatePath } from "../pglite";

ensureTemplate()
  .then((made) => {
    if (made) process.stderr.write(`PGlite data directory template written to ${templatePath()}\n`);
  })
  .catch((err: unknown) => {
    process.stderr.write(`PGlite template failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
