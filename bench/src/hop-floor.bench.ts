// `pnpm bench:hop-floor` (issue 9, the gateway hop): what ANY proxy in front of crm-records costs on
// this machine, as the floor the gateway's goals are measured against. crm-records' real app runs in
// this process on the local PostgreSQL (served by service-kit's expressServer, as `listen` serves
// it); the bare proxy of bare-proxy.ts runs in its own process in front of it; autocannon (a child
// process, its CPU not counted) drives POST /client and the default list, straight and through the
// proxy, alternating which goes first, round by round. It prints req/s through the proxy over
// straight (the gateway's goal is >= 0.85) and the proxy's CPU per request (the gateway's own is in
// `pnpm bench:records`). Settings: BENCH_ROUNDS (5; the first warms the JIT and is not counted),
// BENCH_DURATION_S (3), BENCH_CONNECTIONS (20). It prints figures; nothing is asserted.
import os from "node:os";
import { expressServer } from "@crm/service-kit";
import { createApp } from "../../services/crm-records/src/app";
import { cpuMs, median, pidListeningOn, runMain } from "./load";
import { spawnPeer } from "./peer-process";
import { autocannonChild, openRecordsInProcess } from "./records-in-process";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const BUSINESS = "0193a1b2-0000-7000-8000-00000000000b";
const BODY = JSON.stringify({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", companyName: "Navy" });
const REQUESTS = [
  { name: "POST /client", method: "POST", path: "/api/v1/client" },
  { name: "default list", method: "GET", path: "/api/v1/client?perPage=20&include=-contacts" },
] as const;

/** One autocannon run: requests answered in all. */
async function drive(origin: string, request: (typeof REQUESTS)[number], headers: Record<string, string>): Promise<number> {
  const args = ["-c", String(CONNECTIONS), "-d", String(DURATION_S), "-m", request.method];
  if (request.method === "POST") args.push("-b", BODY);
  for (const [name, value] of Object.entries(headers)) args.push("-H", `${name}=${value}`);
  const result = await autocannonChild([...args, `${origin}${request.path}`]);
  if (result.non2xx + result.errors > 0) throw new Error(`${request.name} at ${origin}: ${result.non2xx} non-2xx, ${result.errors} errors`);
  return result.requests.total;
}

async function main() {
  const records = await openRecordsInProcess("bench_hop_floor");
  const app = expressServer(createApp({ ...records.deps, onCommitted: () => undefined }));
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  const straight = `http://127.0.0.1:${(app.address() as { port: number }).port}`;
  const proxy = await spawnPeer("bare-proxy.ts", [straight]);
  // tsx runs the proxy in a child process of its own: read the CPU of the one that listens.
  const proxyPid = pidListeningOn(Number(new URL(proxy.url).port));
  const headers = records.headersFor(BUSINESS, ["create", "read"]);
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
  await records.close();
}

runMain(main);
