// `pnpm bench:hop-floor` (issue 9, the gateway hop): what ANY proxy in front of crm-records costs on
// this machine, as the floor the gateway's goals are measured against. crm-records' real app runs in
// this process on the local PostgreSQL (served by service-kit's expressServer, as `listen` serves
// it); the bare proxy of bare-proxy.ts runs in its own process in front of it; autocannon (a child
// process, its CPU not counted) drives POST /client and the default list, straight and through the
// proxy, alternating which goes first, round by round. It prints req/s through the proxy over
// straight (the gateway's goal is >= 0.85) and the proxy's CPU per request (the gateway's own is in
// `pnpm bench:records`). Settings: BENCH_ROUNDS (5; the first warms the JIT and is not counted),
// BENCH_DURATION_S (3), BENCH_CONNECTIONS (20). It prints figures; nothing is asserted.
import { spawn } from "node:child_process";
import os from "node:os";
import { openDatabase } from "../../packages/database/src";
import { createLogger } from "../../packages/logger/src";
import { createTestDatabase, startInfra, testInfra } from "@crm/testing";
import { permission, type Principal } from "@crm/contracts";
import { expressServer, signInternalToken } from "@crm/service-kit";
import { createPrismaClient } from "../../services/crm-records/src/persistence/prisma";
import { createApp } from "../../services/crm-records/src/app";
import { MIGRATIONS_DIR } from "../../services/crm-records/src/start";
import { cpuMs, median, pidListeningOn, runMain } from "./load";
import { spawnPeer } from "./peer-process";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const BUSINESS = "0193a1b2-0000-7000-8000-00000000000b";
const BODY = JSON.stringify({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" });
const REQUESTS = [
  { name: "POST /client", method: "POST", path: "/api/v1/client" },
  { name: "default list", method: "GET", path: "/api/v1/client?perPage=20&include=-contacts" },
] as const;

/** One autocannon run in a child process: requests answered in all. */
function drive(origin: string, request: (typeof REQUESTS)[number], headers: Record<string, string>): Promise<number> {
  const args = ["-c", String(CONNECTIONS), "-d", String(DURATION_S), "-j", "-m", request.method];
  if (request.method === "POST") args.push("-b", BODY);
  for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}=${value}`);
  args.push(`${origin}${request.path}`);
  const child = spawn(`${__dirname}/../node_modules/.bin/autocannon`, args, { stdio: ["ignore", "pipe", "ignore"] });
  let out = "";
  child.stdout.on("data", (chunk) => (out += chunk));
  return new Promise((resolve, reject) =>
    child.on("exit", () => {
      const result = JSON.parse(out) as { requests: { total: number }; non2xx: number; errors: number };
      if (result.non2xx + result.errors > 0) reject(new Error(`${request.name} at ${origin}: ${result.non2xx} non-2xx, ${result.errors} errors`));
      else resolve(result.requests.total);
    }),
  );
}

async function main() {
  const infra = await startInfra(() => undefined);
  Object.assign(testInfra, { databaseUrl: infra.databaseUrl });
  const database = await createTestDatabase("bench_hop_floor");
  const db = await openDatabase({ url: database.url, dataDir: os.tmpdir(), schema: "records", migrationsDir: MIGRATIONS_DIR, migrate: true });
  const prisma = createPrismaClient(db.adapter);
  const secret = "s".repeat(40);
  const logger = createLogger({ service: "crm-records", level: "warn" });
  const app = expressServer(createApp({ logger, prisma, internalTokenSecret: secret, sql: db.sql, parallelQueries: true, onCommitted: () => undefined }));
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  const straight = `http://127.0.0.1:${(app.address() as { port: number }).port}`;
  const proxy = await spawnPeer("bare-proxy.ts", [straight]);
  // tsx runs the proxy in a child process of its own: read the CPU of the one that listens.
  const proxyPid = pidListeningOn(Number(new URL(proxy.url).port));
  const principal: Principal = {
    businessId: BUSINESS,
    authType: "jwt",
    userId: BUSINESS,
    apiKeyId: null,
    sessionId: null,
    jti: null,
    permissions: [permission("clients", "create"), permission("clients", "read")],
  };
  const headers = { "content-type": "application/json", "x-internal-token": signInternalToken({ principal, requestId: "bench" }, secret, 86_400) };
  console.log(
    `hop floor: ${CONNECTIONS} connections, ${ROUNDS} rounds x ${DURATION_S} s, ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${new Date().toISOString()}`,
  );
  for (const request of REQUESTS) {
    const ratios: number[] = [];
    const proxyCpu: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const rates: Record<string, number> = {};
      for (const way of round % 2 === 0 ? ["straight", "proxy"] : ["proxy", "straight"]) {
        const before = cpuMs(proxyPid);
        const answered = await drive(way === "straight" ? straight : proxy.url, request, headers);
        rates[way] = answered / DURATION_S;
        if (way === "proxy") proxyCpu.push((cpuMs(proxyPid) - before) / answered);
      }
      const ratio = rates["proxy"]! / rates["straight"]!;
      console.log(
        `  ${request.name} round ${round + 1}: straight ${rates["straight"]!.toFixed(0)} req/s, through the bare proxy ${rates["proxy"]!.toFixed(0)} req/s, ratio ${ratio.toFixed(2)}, proxy CPU ${proxyCpu.at(-1)!.toFixed(3)} ms per request`,
      );
      if (round > 0) ratios.push(ratio);
      else proxyCpu.pop();
    }
    console.log(
      `${request.name}: through a bare proxy / straight ${median(ratios).toFixed(2)} (the gateway's goal is >= 0.85); the proxy's CPU ${median(proxyCpu).toFixed(3)} ms per request`,
    );
  }
  await proxy.close();
  app.close();
  await prisma.$disconnect();
  await db.close();
  await database.drop();
  await infra.stop();
}

runMain(main);
