// The root .env.example is what a newcomer copies: every setting it names must be one the services
// accept (a renamed setting stops a service at start, so a stale line here would stop the product).
import { readFileSync } from "node:fs";
import path from "node:path";
import { loadConfig as crmRecordsConfig } from "../services/crm-records/src/config";
import { loadConfig as gatewayConfig } from "../services/gateway/src/config";
import { loadConfig as identityConfig } from "../services/identity/src/config";
import { loadConfig as webhookDeliveryConfig } from "../services/webhook-delivery/src/config";

const ROOT = path.resolve(__dirname, "..");

/** The `NAME=value` lines, commented ones (`# NAME=value`) included: both are settings a reader may set. */
function settingsOf(text: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of text.split("\n")) {
    const match = /^#?\s*([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
    if (match) settings[match[1]!] = match[2]!;
  }
  return settings;
}

describe("the root .env.example", () => {
  const settings = settingsOf(readFileSync(path.join(ROOT, ".env.example"), "utf8"));
  const operations = readFileSync(path.join(ROOT, "docs/operations.md"), "utf8");

  it("names only settings docs/operations.md documents", () => {
    expect(Object.keys(settings).length).toBeGreaterThan(20);
    expect(Object.keys(settings).filter((name) => !operations.includes(`\`${name}\``))).toEqual([]);
  });

  it("starts every service as written (its uncommented lines, on the single-machine defaults)", () => {
    const uncommented = settingsOf(
      readFileSync(path.join(ROOT, ".env.example"), "utf8")
        .split("\n")
        .filter((line) => !line.startsWith("#"))
        .join("\n"),
    );
    for (const load of [gatewayConfig, identityConfig, crmRecordsConfig, webhookDeliveryConfig]) expect(() => load({ ...uncommented })).not.toThrow();
  });
});
