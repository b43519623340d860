// `npx tsx bench/src/records-http.bench.ts` (issue 9): what crm-records' HTTP layer costs per create,
// in CPU of one process. The same RecordService.create is served three ways in this process, on the
// local PostgreSQL: crm-records' real Express app, served by expressServer as in the product (service-kit's
// middleware chain, Express's router and response, the records router); a bare node:http handler that does only the router's own work (the
// body check and zod, the create, the ETag, the JSON answer); and a bare handler with the create alone.
// autocannon runs as a child process (its CPU is not counted); the three alternate, round after round.
// Settings: BENCH_ROUNDS (3), BENCH_REQUESTS per run (3000), BENCH_CONNECTIONS (10). The first round
// warms the JIT: read the later ones. BENCH_BASELINE=<another checkout of the repo, installed> adds that
// checkout's crm-records app, served the same way in the same process: a same-run A/B of a change.
// BENCH_ONLY (comma-separated prefixes of the names printed) runs some of them. It prints figures; nothing is asserted.
import http from "node:http";
import { createLogger } from "../../packages/logger/src";
import { entityDefinitions } from "../../services/crm-records/src/entities";
import { RecordService } from "../../services/crm-records/src/application/record.service";
import { expressServer } from "@crm/service-kit";
import { createApp } from "../../services/crm-records/src/app";
import { runMain } from "./load";
import { autocannonChild, openRecordsInProcess } from "./records-in-process";
const BUSINESS = "0193a1b2-0000-7000-8000-00000000000a";
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 3000);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const BODY = JSON.stringify({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" });
async function drive(port: number, headers: Record<string, string>): Promise<number> {
  const args = ["-c", String(CONNECTIONS), "-a", String(REQUESTS), "-m", "POST", "-b", BODY];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}=${v}`);
  return (await autocannonChild([...args, `http://127.0.0.1:${port}/api/v1/client`])).requests.total;
}
async function main() {
  const records = await openRecordsInProcess("bench_records_http");
  const { prisma, sql, secret } = records;
  const app = createApp(records.deps);
  // Served as service-kit's listen serves it in the product.
  const express = expressServer(app).listen(0);
  const baselineRoot = process.env.BENCH_BASELINE;
  let baseline: http.Server | undefined;
  if (baselineRoot) {
    const other = (await import(`${baselineRoot}/services/crm-records/src/app`)) as typeof import("../../services/crm-records/src/app");
    const logger = createLogger({ service: "crm-records", level: "warn" });
    baseline = expressServer(other.createApp({ ...records.deps, logger })).listen(0);
  }
  const service = new RecordService({ prisma, definitions: entityDefinitions, parallelQueries: true, cursorSecret: secret, sql });
  const bare = http
    .createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", async () => {
        const view = await service.create(entityDefinitions.client, BUSINESS, JSON.parse(Buffer.concat(chunks).toString()));
        const body = JSON.stringify({ success: true, data: view });
        res.writeHead(201, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
    })
    .listen(0);
  const { parseRecordBody } = await import("../../services/crm-records/src/http/record-body");
  const { recordEtag } = await import("../../services/crm-records/src/domain/record-etag");
  const handler = http
    .createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c) => chunks.push(c));
      req.on("end", async () => {
        const input = parseRecordBody(entityDefinitions.client.createSchema, JSON.parse(Buffer.concat(chunks).toString()));
        const view = await service.create(entityDefinitions.client, BUSINESS, input);
        const body = JSON.stringify({ success: true, data: view });
        res.writeHead(201, { etag: recordEtag(entityDefinitions.client, view), "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(body) });
        res.end(body);
      });
    })
    .listen(0);
  await new Promise((r) => setTimeout(r, 300));
  const headers = records.headersFor(BUSINESS, ["create"]);
  const port = (s: http.Server) => (s.address() as { port: number }).port;
  const only = process.env.BENCH_ONLY?.split(",").map((s) => s.trim());
  const servers = (
    [
      ["express app", express],
      ...(baseline ? ([[`baseline express app`, baseline]] as const) : []),
      ["bare node:http + RecordService.create", bare],
      ["bare + the router's own work (zod, etag)", handler],
    ] as const
  ).filter(([name]) => !only || only.some((o) => name.startsWith(o)));
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate which goes first, round by round.
    for (const [name, server] of round % 2 === 0 ? servers : [...servers].reverse()) {
      const c0 = process.cpuUsage();
      const n = await drive(port(server), headers);
      const u = process.cpuUsage(c0);
      console.log(`${name.padEnd(40)} ${((u.user + u.system) / 1000 / n).toFixed(3)} ms CPU per create (${n} requests)`);
    }
  }
  express.close();
  baseline?.close();
  bare.close();
  handler.close();
  await records.close();
}
runMain(main);
