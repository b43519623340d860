import { readFileSync } from "node:fs";
import { join } from "node:path";
import { configSchema, loadConfig } from "./config";

describe("crm-records configuration", () => {
  it("keeps events 30 days for the change feed unless EVENTS_RETENTION_DAYS says otherwise, and refuses the setting it replaces", () => {
    expect(loadConfig({}).EVENTS_RETENTION_DAYS).toBe(30);
    expect(loadConfig({ EVENTS_RETENTION_DAYS: "7" }).EVENTS_RETENTION_DAYS).toBe(7);
    expect(() => loadConfig({ EVENTS_RETENTION_DAYS: "0" })).toThrow(/EVENTS_RETENTION_DAYS/);
    expect(() => loadConfig({ OUTBOX_RETENTION_MS: "604800000" })).toThrow(/OUTBOX_RETENTION_MS: replaced by EVENTS_RETENTION_DAYS/);
  });
});

describe("crm-records trash retention", () => {
  it("purges the trash after 30 days unless TRASH_RETENTION_DAYS says otherwise (a whole number of days, at least 1)", () => {
    expect(loadConfig({}).TRASH_RETENTION_DAYS).toBe(30);
    expect(loadConfig({ TRASH_RETENTION_DAYS: "90" }).TRASH_RETENTION_DAYS).toBe(90);
    expect(() => loadConfig({ TRASH_RETENTION_DAYS: "0" })).toThrow(/TRASH_RETENTION_DAYS/);
    expect(() => loadConfig({ TRASH_RETENTION_DAYS: "soon" })).toThrow(/TRASH_RETENTION_DAYS/);
  });
});

describe("crm-records .env.example", () => {
  it("names only settings the service accepts, each with a value it accepts, commented or not", () => {
    const example = readFileSync(join(__dirname, "..", ".env.example"), "utf8");
    const settings: Record<string, string> = {};
    for (const line of example.split("\n")) {
      const match = /^#?\s*([A-Z][A-Z0-9_]*)=(\S*)/.exec(line);
      if (match) settings[match[1]!] = match[2]!;
    }
    expect(Object.keys(settings)).toEqual(expect.arrayContaining(["EVENTS_RETENTION_DAYS", "TRASH_RETENTION_DAYS", "AUDIT_RETENTION_DAYS", "RETENTION_BATCH_SIZE"]));
    const known = new Set(Object.keys(configSchema.shape));
    expect(Object.keys(settings).filter((name) => !known.has(name))).toEqual([]);
    expect(() => loadConfig(settings)).not.toThrow();
  });
});
