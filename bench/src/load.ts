// One autocannon run, reduced to the figures the benchmarks print, and the CPU a process spent
// (from /proc), which a busy machine disturbs far less than throughput.
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import autocannon from "autocannon";

export interface LoadOptions {
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  connections: number;
  durationS: number;
  /** Fixed request rate over all connections (autocannon's overallRate); absent = saturation. */
  overallRate?: number;
}

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx answers plus transport errors and time-outs: any of them makes the run suspect. */
  failures: number;
}

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    method: options.method ?? "GET",
    headers: options.headers,
    body: options.body,
    connections: options.connections,
    duration: options.durationS,
    ...(options.overallRate ? { overallRate: options.overallRate } : {}),
  });
  return {
    rps: result.requests.total / options.durationS,
    p50: result.latency.p50,
    p99: result.latency.p99,
    failures: result.non2xx + result.errors + result.timeouts,
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export interface PacedOptions extends Omit<LoadOptions, "overallRate"> {
  /** Requests per second, sent evenly spaced (open loop). */
  rate: number;
}

/**
 * Requests (GETs unless told) at a fixed, evenly paced rate over a pool of `connections` keep-alive connections. Unlike
 * autocannon's `overallRate` (each connection fires its per-second quota back to back, then waits
 * for the next second, so every second starts at saturation), request i is due at start + i/rate
 * and its latency counts from that moment, so time spent queued behind a slow answer counts too.
 */
export async function runPaced(options: PacedOptions): Promise<LoadResult> {
  const { Pool } = await import("undici");
  const url = new URL(options.url);
  const pool = new Pool(url.origin, { connections: options.connections, pipelining: 1 });
  const latencies: number[] = [];
  let failures = 0;
  const total = Math.round(options.rate * options.durationS);
  const intervalMs = 1000 / options.rate;
  const inFlight: Array<Promise<void>> = [];
  const start = performance.now();
  let sent = 0;
  const one = async (dueAt: number): Promise<void> => {
    try {
      const res = await pool.request({ method: options.method ?? "GET", path: url.pathname + url.search, headers: options.headers, body: options.body });
      await res.body.dump();
      if (res.statusCode < 200 || res.statusCode >= 300) failures++;
      else latencies.push(performance.now() - dueAt);
    } catch {
      failures++;
    }
  };
  while (sent < total) {
    const now = performance.now();
    while (sent < total && start + sent * intervalMs <= now) {
      inFlight.push(one(start + sent * intervalMs));
      sent++;
    }
    await new Promise((r) => setTimeout(r, Math.max(0, start + sent * intervalMs - performance.now())));
  }
  await Promise.all(inFlight);
  const elapsedS = (performance.now() - start) / 1000;
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN;
  return { rps: latencies.length / elapsedS, p50: at(0.5), p99: at(0.99), failures };
}

/** User and system CPU of a process so far, in ms (from /proc/<pid>/stat; clock ticks are 10 ms). */
function cpuSplitMs(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return { user: Number(fields[11]) * 10, system: Number(fields[12]) * 10 };
}

/**
 * Write-family system calls (write, writev) a process has made so far, from /proc/<pid>/io's `syscw`:
 * on these virtual machines a loopback socket write costs tens of µs, so how many a delivery takes
 * is worth printing beside the CPU. Writes to files and pipes count too (PGlite's data files in the
 * embedded process: a checkpoint shows as a round with a thousand writes more). `pid` "self" reads this process.
 */
export function writeCalls(pid: number | "self"): number {
  const match = /^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"));
  return match ? Number(match[1]) : Number.NaN;
}

/** User + system CPU of a process so far, in ms. */
export function cpuMs(pid: number): number {
  const { user, system } = cpuSplitMs(pid);
  return user + system;
}

/**
 * The process listening on a loopback TCP port (Linux: the socket's inode from /proc/net/tcp, then
 * the process holding it), so a benchmark can read the CPU of a server it did not spawn itself
 * (the harness starts services through a shell script; tsx runs the peer in a child process).
 */
export function pidListeningOn(port: number): number {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  const inodes = new Set<string>();
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text = "";
    try {
      text = readFileSync(table, "utf8");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is ADDR:PORT in hex; state 0A is LISTEN; column 9 is the inode.
      if (cols[1]?.endsWith(`:${hexPort}`) && cols[3] === "0A") inodes.add(cols[9]!);
    }
  }
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const target = readlinkSync(`/proc/${entry}/fd/${fd}`);
        if (target.startsWith("socket:[") && inodes.has(target.slice(8, -1))) return Number(entry);
      } catch {
        /* closed meanwhile */
      }
    }
  }
  throw new Error(`no process of this user listens on port ${port}`);
}

/** A benchmark's entry point: exit 0 when `main` resolves, print the error and exit 1 when it rejects (servers it left open must not keep the process alive). */
export function runMain(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
