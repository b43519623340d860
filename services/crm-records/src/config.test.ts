import { loadConfig } from "./config";

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
