// Preloaded into each product process by `BENCH_PGLITE_PROBE=<dir>` (NODE_OPTIONS=--require ...): on
// embedded PGlite's worker thread, the time each request (a statement, exec, BEGIN/COMMIT) held the
// thread, summed per statement text, written every second as one JSON line (cumulative, with the time)
// to <dir>/pglite-<pid>.jsonl, so a run's timed rounds are the difference of two lines. Requests are
// answered one at a time, in arrival order: a request's own time is from when it arrived or the
// previous answer went out, whichever is later, to its answer. Work the thread does on its own
// (autovacuum's VACUUM and ANALYZE, through PGlite's exec) is counted the same way, under
// "autovacuum: VACUUM <table>" / "autovacuum: ANALYZE <table>", and not in the request that waited
// for it. Bench-only.
const { isMainThread, parentPort } = require("node:worker_threads");
const fs = require("node:fs");
const path = require("node:path");

const dir = process.env.BENCH_PGLITE_PROBE_DIR;
if (dir && !isMainThread && parentPort) {
  const file = path.join(dir, `pglite-${process.pid}.jsonl`);
  const arrived = new Map();
  /** key -> [count, total ms] */
  const stats = new Map();
  let lastAnswer = 0;
  let busy = 0;
  const keyOf = (request) =>
    request.op === "query" || request.op === "exec" ? `${request.op}${request.tx === undefined ? "" : " (tx)"}: ${request.text.replace(/\s+/g, " ").slice(0, 160)}` : request.op;
  const record = (key, start) => {
    const now = performance.now();
    const own = Math.max(0, now - Math.max(start, lastAnswer));
    lastAnswer = now;
    busy += own;
    const entry = stats.get(key) ?? [0, 0];
    entry[0] += 1;
    entry[1] += own;
    stats.set(key, entry);
  };
  try {
    // The PGlite the worker bundle loads: resolved as from packages/database (the product runs from the root).
    const { PGlite } = require(require.resolve("@electric-sql/pglite", { paths: [path.join(process.cwd(), "packages/database")] }));
    let proto = PGlite.prototype;
    while (proto && !Object.hasOwn(proto, "exec")) proto = Object.getPrototypeOf(proto);
    const exec = proto.exec;
    proto.exec = async function (text, ...rest) {
      if (!/^(VACUUM|ANALYZE) /.test(text)) return exec.call(this, text, ...rest);
      const start = performance.now();
      try {
        return await exec.call(this, text, ...rest);
      } finally {
        record(`autovacuum: ${text}`, start);
      }
    };
  } catch {
    /* no PGlite here */
  }
  const on = parentPort.on.bind(parentPort);
  parentPort.on = (event, listener) => on(event, event === "message" ? (request) => (arrived.set(request.id, [performance.now(), keyOf(request)]), listener(request)) : listener);
  const post = parentPort.postMessage.bind(parentPort);
  parentPort.postMessage = (answer, ...rest) => {
    const start = arrived.get(answer.id);
    if (start) {
      arrived.delete(answer.id);
      record(start[1], start[0]);
    }
    return post(answer, ...rest);
  };
  let written = -1;
  const timer = setInterval(() => {
    if (busy === written) return;
    written = busy;
    fs.appendFileSync(file, `${JSON.stringify({ t: Date.now(), busy, stats: Object.fromEntries(stats) })}\n`);
  }, 1000);
  timer.unref();
}
