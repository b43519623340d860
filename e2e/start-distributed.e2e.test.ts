// `pnpm start:distributed` from a clean state, as the README tells a newcomer to run it: a fresh
// DATA_DIR and fresh databases (a unique prefix, so runs never meet), this machine's PostgreSQL and
// Redis, and librdkafka's mock cluster started by the command itself where the test infrastructure is
// the mock too. The README's walk-through is driven against it (sign-up, an API key, a client, a
// signed webhook received on loopback), then Ctrl-C must stop every process it started.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { describeDistributed, dropDatabases, freePort, testInfra, verifyInterfaceSignature, waitFor } from "@crm/testing";
import { ApiClient } from "./api-client";
import { baseEnv, pnpm, ROOT, startReceiver } from "./harness";

jest.setTimeout(300_000);

const SCHEMAS = ["identity", "records", "webhooks"];

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

describeDistributed("pnpm start:distributed", () => {
  const prefix = `crm_e2e_sd_${randomBytes(4).toString("hex")}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), "crm-start-distributed-"));
  let ports: number[];
  let launcher: ChildProcess;
  let output = "";

  beforeAll(async () => {
    ports = [await freePort(), await freePort(), await freePort(), await freePort()];
    const [command, args] = pnpm(["start:distributed"]);
    launcher = spawn(command, args, {
      cwd: ROOT,
      // Its own process group, so the test can press Ctrl-C on it as a terminal would.
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: baseEnv({
        DATA_DIR: dataDir,
        DATABASE_PREFIX: prefix,
        DATABASE_ADMIN_URL: testInfra.databaseUrl!,
        REDIS_URL: testInfra.redisUrl!,
        // The command starts a mock cluster of its own when no broker is given; a real one is used as given.
        ...(testInfra.kafkaIsMock ? {} : { KAFKA_BROKERS: testInfra.kafkaBrokers! }),
        PORT: String(ports[0]),
        IDENTITY_PORT: String(ports[1]),
        CRM_RECORDS_PORT: String(ports[2]),
        WEBHOOK_DELIVERY_PORT: String(ports[3]),
      }),
    });
    for (const stream of [launcher.stdout!, launcher.stderr!]) stream.on("data", (chunk: Buffer) => void (output += chunk.toString("utf8")));
    await waitFor(() => output.includes("Ctrl-C stops everything.") || (launcher.exitCode !== null && Promise.reject(new Error(output))), 180_000, 200).catch((err) => {
      throw new Error(`start:distributed did not come up: ${String(err)}\n${output}`);
    });
  });

  afterAll(async () => {
    try {
      if (launcher.pid && launcher.exitCode === null) process.kill(-launcher.pid, "SIGKILL");
    } catch {
      /* already gone */
    }
    await dropDatabases(SCHEMAS.map((schema) => `${prefix}_${schema}`));
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("prints each service's URL, its database and the broker, and keeps the shared secrets under DATA_DIR", () => {
    expect(output).toContain(`listening on http://127.0.0.1:${ports[0]}/api/v1`);
    for (const [i, service] of ["identity", "crm-records", "webhook-delivery"].entries()) {
      expect(output).toMatch(new RegExp(`${service} +http://127\\.0\\.0\\.1:${ports[i + 1]} +database ${prefix}_${SCHEMAS[i]} \\(created\\)`));
    }
    expect(output).toMatch(/Kafka +\S+/);
    for (const file of ["jwt-secret", "internal-token-secret", "idempotency-encryption-key", "webhook-secret-key"])
      expect(existsSync(path.join(dataDir, "secrets", file))).toBe(true);
  });

  it("carries the walk-through: sign-up, an API key, a client, a signed webhook received on loopback", async () => {
    const api = new ApiClient(`http://127.0.0.1:${ports[0]}`);
    await api.signUp(`start-distributed-${Date.now()}`);
    const receiver = await startReceiver(200);
    try {
      const hook = await api.call("POST", "/api/v1/webhook", { url: receiver.url, events: ["client.created"], description: "demo" });
      expect(hook.status).toBe(201);
      const key = await api.call("POST", "/api/v1/api-key", { name: "walk-through", scopes: ["clients.create", "clients.read"] });
      expect(key.status).toBe(201);
      api.apiKey = key.body.data.key as string;
      const created = await api.call("POST", "/api/v1/client", { firstName: "Grace", lastName: "Hopper", email: "grace@example.com" });
      expect(created.status).toBe(201);
      const delivery = await waitFor(() => receiver.received[0], 30_000, 100);
      expect(verifyInterfaceSignature(hook.body.data.secret, delivery.rawBody, delivery.headers["x-service-signature"] as string)).toBe(true);
      expect(JSON.parse(delivery.rawBody)).toMatchObject({ event: "client.created", data: { id: created.body.data.id, lastName: "Hopper" } });
      api.apiKey = undefined;
      const log = await waitFor(async () => {
        const res = await api.call("GET", `/api/v1/webhook/${hook.body.data.id}/deliveries`);
        return res.body.data[0]?.status === "SUCCESS" ? res.body.data : undefined;
      }, 30_000);
      expect(log).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it("stops every process it started on Ctrl-C", async () => {
    const exited = new Promise<number | null>((resolve) => launcher.once("exit", (code) => resolve(code)));
    process.kill(-launcher.pid!, "SIGINT");
    await Promise.race([exited, new Promise((_, reject) => setTimeout(() => reject(new Error(`no exit after Ctrl-C:\n${output}`)), 60_000))]);
    // The launcher exits once the services have; none is left listening.
    await waitFor(async () => (await Promise.all(ports.map(portOpen))).every((open) => !open), 30_000, 200);
  });
});
