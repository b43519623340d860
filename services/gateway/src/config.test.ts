import { ConfigError } from "@crm/config";
import { loadConfig } from "./config";

const KEY = "a-shared-idempotency-key-0123456789abcdef";

describe("gateway configuration", () => {
  it("refuses REDIS_URL without IDEMPOTENCY_ENCRYPTION_KEY, naming it (issue 35 item 10)", () => {
    expect(() => loadConfig({ REDIS_URL: "redis://127.0.0.1:6379" })).toThrow(ConfigError);
    expect(() => loadConfig({ REDIS_URL: "redis://127.0.0.1:6379" })).toThrow(/^Invalid configuration: IDEMPOTENCY_ENCRYPTION_KEY: required with REDIS_URL/);
    // Empty means unset, as everywhere.
    expect(() => loadConfig({ REDIS_URL: "redis://127.0.0.1:6379", IDEMPOTENCY_ENCRYPTION_KEY: "" })).toThrow(/IDEMPOTENCY_ENCRYPTION_KEY/);
  });

  it("takes REDIS_URL with a key, and a single machine without one (generated under DATA_DIR)", () => {
    expect(loadConfig({ REDIS_URL: "redis://127.0.0.1:6379", IDEMPOTENCY_ENCRYPTION_KEY: KEY }).IDEMPOTENCY_ENCRYPTION_KEY).toBe(KEY);
    expect(loadConfig({}).IDEMPOTENCY_ENCRYPTION_KEY).toBeUndefined();
  });

  it("reads TRUSTED_PROXIES as addresses or CIDR blocks, and refuses the hop count it replaces (extensions §E3.2)", () => {
    expect(loadConfig({ TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.1,::1" }).TRUSTED_PROXIES).toEqual(["10.0.0.0/8", "192.0.2.1", "::1"]);
    expect(loadConfig({}).TRUSTED_PROXIES).toEqual([]);
    expect(() => loadConfig({ TRUSTED_PROXIES: "10.0.0.0/8,proxy.internal" })).toThrow(/TRUSTED_PROXIES\.1: not an IPv4 or IPv6 address or CIDR block/);
    expect(() => loadConfig({ TRUST_PROXY_HOPS: "1" })).toThrow(/TRUST_PROXY_HOPS: replaced by TRUSTED_PROXIES/);
  });
});
