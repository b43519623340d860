// Preloaded into each product process by `BENCH_CPU_PROF=<dir>` (NODE_OPTIONS=--require ...; Node
// refuses --cpu-prof in NODE_OPTIONS): V8's sampling profiler runs from start to exit, and the
// profile is written as <dir>/<script>-<pid>.cpuprofile (open it in Chrome DevTools or speedscope).
const inspector = require("node:inspector");
const fs = require("node:fs");
const path = require("node:path");

const dir = process.env.BENCH_CPU_PROF_DIR;
// Worker threads (embedded PGlite's) preload this too: each thread writes its own profile.
const { threadId } = require("node:worker_threads");
const thread = threadId ? `-thread${threadId}` : "";
const script = path.basename(path.dirname(path.dirname(path.resolve(process.argv[process.argv.length - 1] ?? "node")))) || "node";
if (dir) {
  const session = new inspector.Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.start");
  process.on("exit", () => {
    // Same-thread sessions answer synchronously, so the file is written before the process ends.
    session.post("Profiler.stop", (err, result) => {
      if (!err) fs.writeFileSync(path.join(dir, `${script}-${process.pid}${thread}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}
