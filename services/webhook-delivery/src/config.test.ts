import { ConfigError } from "@crm/config";
import { loadConfig } from "./config";

describe("loadConfig", () => {
  it("has the production defaults of decisions §1", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      PORT: 4003,
      WEBHOOK_TIMEOUT_MS: 10_000,
      WEBHOOK_RETRY_DELAYS_MS: [60_000, 300_000],
      WEBHOOK_RETRY_INTERVAL_MS: 30_000,
      WEBHOOK_RETRY_BATCH_SIZE: 10,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: false,
      KAFKA_FETCH_MAX_WAIT_MS: 100,
      KAFKA_SESSION_TIMEOUT_MS: 6_000,
      KAFKA_HEARTBEAT_INTERVAL_MS: 1_000,
      KAFKA_COMMIT_INTERVAL_MS: 1_000,
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("reads the WEBHOOK_* variables", () => {
    const config = loadConfig({
      WEBHOOK_TIMEOUT_MS: "500",
      WEBHOOK_RETRY_DELAYS_MS: "200, 400",
      WEBHOOK_RETRY_INTERVAL_MS: "100",
      WEBHOOK_RETRY_BATCH_SIZE: "3",
      WEBHOOK_ALLOW_PRIVATE_TARGETS: "true",
    });
    expect(config).toMatchObject({
      WEBHOOK_TIMEOUT_MS: 500,
      WEBHOOK_RETRY_DELAYS_MS: [200, 400],
      WEBHOOK_RETRY_INTERVAL_MS: 100,
      WEBHOOK_RETRY_BATCH_SIZE: 3,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: true,
    });
  });

  it.each([
    ["WEBHOOK_TIMEOUT_MS", "soon"],
    ["WEBHOOK_RETRY_DELAYS_MS", "60s,5m"],
    ["WEBHOOK_RETRY_BATCH_SIZE", "0"],
    ["WEBHOOK_ALLOW_PRIVATE_TARGETS", "maybe"],
    ["KAFKA_FETCH_MAX_WAIT_MS", "0"],
    ["PORT", "70000"],
  ])("refuses %s=%s with one line naming the variable", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration: ${name}: `));
  });
});
