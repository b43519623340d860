// `pnpm bench`: throughput and latency of the hot paths, printed as figures (never asserted).
// 1. pure parts in-process (query language, internal token, JWT verification);
// 2. the whole product in single-process mode over loopback HTTP (reads, writes, memory).
import { createSecretKey, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import jwt from "jsonwebtoken";
import { parseListQuery, toPrismaWhere, type QuerySpec } from "@crm/query-language";
import { signInternalToken, verifyInternalToken } from "@crm/service-kit";
import { startStandalone } from "../infra/standalone/src/standalone";

function opsPerSecond(label: string, fn: () => void, ms = 1000): void {
  for (let i = 0; i < 1000; i++) fn();
  let n = 0;
  const start = process.hrtime.bigint();
  const end = start + BigInt(ms) * 1_000_000n;
  while (process.hrtime.bigint() < end) {
    for (let i = 0; i < 100; i++) fn();
    n += 100;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(
    `${label.padEnd(48)} ${Math.round(n / seconds)
      .toLocaleString("en-US")
      .padStart(12)} ops/s`,
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function load(label: string, total: number, concurrency: number, call: (i: number) => Promise<Response>): Promise<void> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const i = next++;
        const t0 = performance.now();
        const res = await call(i);
        await res.arrayBuffer();
        if (!res.ok) failures++;
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(48)} ${Math.round(total / seconds)
      .toLocaleString("en-US")
      .padStart(8)} req/s  p50 ${percentile(latencies, 50).toFixed(1)} ms  p99 ${percentile(latencies, 99).toFixed(1)} ms${failures ? `  (${failures} non-2xx)` : ""}`,
  );
}

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${os.cpus().length} cores\n\n-- in-process --`);
  const spec: QuerySpec = {
    fields: {
      id: { type: "string", nullable: false },
      firstName: { type: "string", nullable: false },
      email: { type: "string", nullable: true },
      isActive: { type: "boolean", nullable: false },
      totalAmount: { type: "decimal", nullable: false },
      createdAt: { type: "datetime", nullable: false },
    },
    relations: { contacts: { default: true }, invoices: { default: false } },
  };
  const query = {
    page: "2",
    perPage: "25",
    where: 'isActive:true,OR:[firstName:startsWith:an,email:contains:"@x.test"],NOT:totalAmount:lt:float(10.5),createdAt:gte:date(2026-01-01)',
    orderBy: "firstName:asc,createdAt:desc",
    include: "invoices,-contacts",
  };
  opsPerSecond("query language: parse + compile a 5-condition list", () => {
    const parsed = parseListQuery(query, spec);
    toPrismaWhere(parsed.where, spec);
  });
  const secret = randomBytes(32).toString("hex");
  const principal = { businessId: "b", authType: "jwt" as const, userId: "u", apiKeyId: null, sessionId: "s", jti: "j", permissions: ["clients.read"] };
  opsPerSecond("internal token: sign (HS256)", () => void signInternalToken({ principal }, secret));
  const internal = signInternalToken({ principal }, secret);
  opsPerSecond("internal token: verify + schema check", () => void verifyInternalToken(internal, secret));
  const key = createSecretKey(Buffer.from(secret));
  const access = jwt.sign({ sub: "u", businessId: "b", jti: "j" }, secret, { algorithm: "HS256", expiresIn: 1800 });
  opsPerSecond("access JWT: verify with a pre-built KeyObject", () => void jwt.verify(access, key, { algorithms: ["HS256"] }));

  console.log("\n-- whole product, single-process mode, loopback HTTP --");
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crm-bench-"));
  const rssBefore = process.memoryUsage().rss;
  const product = await startStandalone({
    ...process.env,
    PORT: "0",
    DATA_DIR: dataDir,
    RATE_LIMIT_MAX: "100000000",
    LOG_LEVEL: "silent",
    DATABASE_URL: "",
    REDIS_URL: "",
    KAFKA_BROKERS: "",
  });
  try {
    const base = `${product.url}/api/v1`;
    const signUp = await fetch(`${base}/auth/sign-up`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ businessName: "Bench", email: `bench-${Date.now()}@example.test`, password: "bench-password-123" }),
    });
    const token = ((await signUp.json()) as { data: { accessToken: string } }).data.accessToken;
    const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    await load("POST /client (write + outbox + event)", 500, 8, (i) =>
      fetch(`${base}/client`, { method: "POST", headers: auth, body: JSON.stringify({ firstName: `F${i}`, lastName: "Bench", email: `c${i}@example.test` }) }),
    );
    await load("GET /client?perPage=10 (list + count)", 1000, 16, () => fetch(`${base}/client?perPage=10`, { headers: auth }));
    await load("GET /client?where=... (filtered list)", 1000, 16, () =>
      fetch(`${base}/client?where=${encodeURIComponent("lastName:Bench,firstName:startsWith:F1")}&orderBy=firstName:asc`, { headers: auth }),
    );
    await load("GET /capabilities (gateway only)", 2000, 16, () => fetch(`${base}/capabilities`));
    console.log(
      `\nRSS: ${(process.memoryUsage().rss / 2 ** 20).toFixed(0)} MiB (${((process.memoryUsage().rss - rssBefore) / 2 ** 20).toFixed(0)} MiB for the product incl. PGlite)`,
    );
  } finally {
    await product.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
