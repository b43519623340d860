// The service as a process starts it: config, embedded database, bus, relay, HTTP; then stops cleanly.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConfigError } from "@crm/config";
import { uuidv7 } from "@crm/contracts";
import { signInternalToken } from "@crm/service-kit";
import { loadConfig, start } from "../src";
import { principalFor, SECRET } from "./harness";

describe("loadConfig", () => {
  it("defaults PORT to 4002 and OUTBOX_POLL_INTERVAL_MS to 1000", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({ PORT: 4002, OUTBOX_POLL_INTERVAL_MS: 1000, HOST: "127.0.0.1", DATA_DIR: "./.data", MIGRATE_ON_START: false });
    expect(loadConfig({ OUTBOX_POLL_INTERVAL_MS: "250" }).OUTBOX_POLL_INTERVAL_MS).toBe(250);
  });

  it("fails with one line naming the variable", () => {
    expect(() => loadConfig({ PORT: "http" })).toThrow(ConfigError);
    expect(() => loadConfig({ OUTBOX_POLL_INTERVAL_MS: "soon" })).toThrow(/^Invalid configuration: OUTBOX_POLL_INTERVAL_MS: /);
    expect(() => loadConfig({ DATABASE_URL: "mysql://x" })).toThrow(/DATABASE_URL/);
  });
});

describe("start", () => {
  it("serves health, readiness and records on an embedded database, and stops", async () => {
    const dataDir = mkdtempSync(path.join(os.tmpdir(), "crm-records-start-"));
    const service = await start(loadConfig({ PORT: "0", DATA_DIR: dataDir, INTERNAL_TOKEN_SECRET: SECRET, LOG_LEVEL: "silent", OUTBOX_POLL_INTERVAL_MS: "50" }));
    try {
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
      const ready = await fetch(`${service.url}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([200, { status: "ready", checks: { database: "ok", bus: "ok" } }]);
      const token = signInternalToken({ principal: principalFor(uuidv7()) }, SECRET);
      const created = await fetch(`${service.url}/api/v1/employee`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-internal-token": token },
        body: JSON.stringify({ firstName: "Start", lastName: "Up" }),
      });
      expect(created.status).toBe(201);
      // Retention runs on its own; a run now finds nothing old enough (EVENTS_RETENTION_DAYS, TRASH_RETENTION_DAYS: 30 days; claimed Idempotency-Keys, 24 h; list cursor values, 7 days; AUDIT_RETENTION_DAYS, 365 days).
      expect(await service.retention.runNow()).toEqual({ "outbox events": 0, "idempotent creates": 0, "list cursor values": 0, "trashed records": 0, "audit entries": 0 });
    } finally {
      // No consumer listens on the in-process bus here: the flush fails softly and the event stays pending.
      await service.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
