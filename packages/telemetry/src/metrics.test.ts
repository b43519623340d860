import { readFileSync } from "node:fs";
import path from "node:path";
import { allMetricGroups, metricsRegistry, SampledValues, statusClass } from "./metrics";

describe("metrics catalogue", () => {
  it("documents every metric the product declares in docs/operations.md, with its type", async () => {
    allMetricGroups();
    const doc = readFileSync(path.resolve(__dirname, "../../../docs/operations.md"), "utf8");
    const declared = (await metricsRegistry().getMetricsAsJSON()).filter((m) => m.name.startsWith("crm_"));
    expect(declared.length).toBeGreaterThan(20);
    for (const metric of declared) {
      const row = doc.split("\n").find((line) => line.startsWith(`| \`${metric.name}\` |`));
      expect({ metric: metric.name, documented: row !== undefined }).toEqual({ metric: metric.name, documented: true });
      expect(row).toContain(`| ${metric.type}`);
    }
  });

  it("names status classes from a fixed set", () => {
    expect([200, 204, 301, 404, 429, 500, 503, 0, 99, 700].map(statusClass)).toEqual(["2xx", "2xx", "3xx", "4xx", "4xx", "5xx", "5xx", "other", "other", "other"]);
  });

  it("reads sampled values from live sources only, skipping one that fails", async () => {
    let now = 1_000_000;
    const values = new SampledValues<number>(() => now);
    const remove = values.add(async () => 1);
    values.add(async () => {
      throw new Error("database down");
    });
    expect(await values.read()).toEqual([1]);
    remove();
    now += 1_050; // past the second a read is shared for
    expect(await values.read()).toEqual([]);
  });
});
