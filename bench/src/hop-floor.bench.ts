// `pnpm bench:hop-floor` (issue 9, the gateway hop): what ANY proxy in front of crm-records costs on
// this machine, as the floor the gateway's goals are measured against. crm-records' real app runs in
// this process on the local PostgreSQL (served by service-kit's expressServer, as `listen` serves
// it); the bare proxy of bare-proxy.ts runs in its own process in front of it; autocannon (a child
// process, its CPU not counted) drives POST /client and the default list, straight and through the
// proxy, alternating which goes first, round by round. It prints req/s through the proxy over
// straight (the gateway's goal is >= 0.85) and the proxy's CPU per request (the gateway's own is in
// `pnpm bench:records`). A second bare proxy reaches the same server over a unix domain socket
// instead of loopback TCP (the client side stays TCP: that is what a caller does), to see what the
// kernel's TCP path costs the hop. The three ways rotate their order round by round. Then the same
// at a fixed, evenly paced rate (BENCH_RATE, 300/s: well below saturation, so a busy machine
// disturbs it less): the proxy's user and system CPU per request and the p50 it adds. crm-records'
// own CPU per request (this process) is printed for each way at saturation: its side of the socket.
// Settings: BENCH_ROUNDS (5; the first warms the JIT and is not counted), BENCH_DURATION_S (3),
// BENCH_CONNECTIONS (20), BENCH_RATE (300). It prints figures; nothing is asserted.
import { rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { expressServer } from "@crm/service-kit";
import { createApp } from "../../services/crm-records/src/app";
import { cpuMs, cpuSplitMs, median, pidListeningOn, runMain, runPaced } from "./load";
import { spawnPeer } from "./peer-process";
import { autocannonChild, openRecordsInProcess } from "./records-in-process";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 20);
const RATE = Number(process.env.BENCH_RATE ?? 300);
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

const WAYS = ["straight", "proxy", "proxy-uds"] as const;
type Way = (typeof WAYS)[number];

async function main() {
  const records = await openRecordsInProcess("bench_hop_floor");
  const app = expressServer(createApp({ ...records.deps, onCommitted: () => undefined }));
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  const straight = `http://127.0.0.1:${(app.address() as { port: number }).port}`;
  // The same HTTP server also takes connections from a unix socket: an http.Server serves any stream
  // handed to it as a connection.
  const socketPath = path.join(os.tmpdir(), `hop-floor-${process.pid}.sock`);
  rmSync(socketPath, { force: true });
  const uds = net.createServer((socket) => app.emit("connection", socket));
  await new Promise<void>((resolve) => uds.listen(socketPath, resolve));
  const proxies = {
    proxy: await spawnPeer("bare-proxy.ts", [straight]),
    "proxy-uds": await spawnPeer("bare-proxy.ts", [straight, socketPath]),
  };
  // tsx runs each proxy in a child process of its own: read the CPU of the one that listens.
  const pids = {
    proxy: pidListeningOn(Number(new URL(proxies.proxy.url).port)),
    "proxy-uds": pidListeningOn(Number(new URL(proxies["proxy-uds"].url).port)),
  };
  const urls: Record<Way, string> = { straight, proxy: proxies.proxy.url, "proxy-uds": proxies["proxy-uds"].url };
  const headers = records.headersFor(BUSINESS, ["create", "read"]);
  console.log(
    `hop floor: ${CONNECTIONS} connections, ${ROUNDS} rounds x ${DURATION_S} s, ${os.cpus().length} cores, load average ${os.loadavg()[0]!.toFixed(1)}, Node ${process.version}, ${new Date().toISOString()}`,
  );
  for (const request of REQUESTS) {
    const ratios = { proxy: [] as number[], "proxy-uds": [] as number[] };
    const proxyCpu = { proxy: [] as number[], "proxy-uds": [] as number[] };
    const serverCpu = { straight: [] as number[], proxy: [] as number[], "proxy-uds": [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const rates: Partial<Record<Way, number>> = {};
      const cpu: Partial<Record<Way, number>> = {};
      const server: Partial<Record<Way, number>> = {};
      const order = [...WAYS.slice(round % WAYS.length), ...WAYS.slice(0, round % WAYS.length)];
      for (const way of order) {
        const pid = way === "straight" ? undefined : pids[way];
        const before = pid === undefined ? 0 : cpuMs(pid);
        // crm-records' side of the hop: this process serves every way (autocannon is a child).
        const serverBefore = process.cpuUsage();
        const answered = await drive(urls[way], request, headers);
        const serverUsed = process.cpuUsage(serverBefore);
        server[way] = (serverUsed.user + serverUsed.system) / 1000 / answered;
        rates[way] = answered / DURATION_S;
        if (pid !== undefined) cpu[way] = (cpuMs(pid) - before) / answered;
      }
      if (round > 0) for (const way of WAYS) serverCpu[way].push(server[way]!);
      const line = [
        `  ${request.name} round ${round + 1} (${order.join(", ")}): crm-records CPU ms/req straight ${server.straight!.toFixed(3)}, via proxy ${server.proxy!.toFixed(3)}, via proxy-uds ${server["proxy-uds"]!.toFixed(3)}; straight ${rates.straight!.toFixed(0)} req/s`,
      ];
      for (const way of ["proxy", "proxy-uds"] as const) {
        const ratio = rates[way]! / rates.straight!;
        line.push(`${way} ${rates[way]!.toFixed(0)} req/s, ratio ${ratio.toFixed(2)}, CPU ${cpu[way]!.toFixed(3)} ms/req`);
        if (round > 0) {
          ratios[way].push(ratio);
          proxyCpu[way].push(cpu[way]!);
        }
      }
      console.log(line.join("; "));
    }
    for (const way of ["proxy", "proxy-uds"] as const) {
      console.log(
        `${request.name}: through a bare proxy${way === "proxy-uds" ? " over a unix socket" : " over TCP"} / straight ${median(ratios[way]).toFixed(2)} (the gateway's goal is >= 0.85); the proxy's CPU ${median(proxyCpu[way]).toFixed(3)} ms per request`,
      );
    }
    console.log(
      `${request.name}: crm-records' CPU per request, straight ${median(serverCpu.straight).toFixed(3)} ms, behind the TCP proxy ${median(serverCpu.proxy).toFixed(3)}, behind the unix-socket proxy ${median(serverCpu["proxy-uds"]).toFixed(3)}`,
    );
  }
  for (const request of REQUESTS) {
    const added = { proxy: [] as number[], "proxy-uds": [] as number[] };
    const user = { proxy: [] as number[], "proxy-uds": [] as number[] };
    const system = { proxy: [] as number[], "proxy-uds": [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      const p50: Partial<Record<Way, number>> = {};
      const order = [...WAYS.slice(round % WAYS.length), ...WAYS.slice(0, round % WAYS.length)];
      const line: string[] = [];
      for (const way of order) {
        const pid = way === "straight" ? undefined : pids[way];
        const before = pid === undefined ? undefined : cpuSplitMs(pid);
        const result = await runPaced({
          url: `${urls[way]}${request.path}`,
          method: request.method,
          headers,
          ...(request.method === "POST" ? { body: BODY } : {}),
          connections: CONNECTIONS,
          durationS: DURATION_S,
          rate: RATE,
        });
        if (result.failures > 0) throw new Error(`${request.name} through ${way}: ${result.failures} failures`);
        p50[way] = result.p50;
        const answered = result.rps * DURATION_S;
        if (way !== "straight" && pid !== undefined && before) {
          const after = cpuSplitMs(pid);
          const u = (after.user - before.user) / answered;
          const s = (after.system - before.system) / answered;
          line.push(`${way} user ${u.toFixed(3)} + system ${s.toFixed(3)} ms/req`);
          if (round > 0) {
            user[way].push(u);
            system[way].push(s);
          }
        }
      }
      for (const way of ["proxy", "proxy-uds"] as const) {
        line.push(`${way} adds ${(p50[way]! - p50.straight!).toFixed(2)} ms at p50`);
        if (round > 0) added[way].push(p50[way]! - p50.straight!);
      }
      console.log(`  ${request.name} @ ${RATE}/s round ${round + 1} (straight p50 ${p50.straight!.toFixed(2)} ms): ${line.join("; ")}`);
    }
    for (const way of ["proxy", "proxy-uds"] as const) {
      console.log(
        `${request.name} @ ${RATE}/s through a bare proxy${way === "proxy-uds" ? " over a unix socket" : " over TCP"}: adds ${median(added[way]).toFixed(2)} ms at p50; the proxy's CPU user ${median(user[way]).toFixed(3)} + system ${median(system[way]).toFixed(3)} ms per request`,
      );
    }
  }
  await Promise.all(Object.values(proxies).map((proxy) => proxy.close()));
  uds.close();
  app.close();
  rmSync(socketPath, { force: true });
  await records.close();
}

runMain(main);
