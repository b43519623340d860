import { z } from "zod";
import { ConfigError, env, parseEnv } from "./env";

const schema = z.object({
  PORT: env.port(3000),
  ALLOW_SIGN_UP: env.bool(true),
  WEBHOOK_RETRY_DELAYS_MS: env.intList().default([60000, 300000]),
  CORS_ALLOWED_ORIGINS: env.csv().default([]),
});

describe("parseEnv", () => {
  it("applies defaults and treats empty strings as unset", () => {
    const cfg = parseEnv(schema, { PORT: "", ALLOW_SIGN_UP: undefined });
    expect(cfg).toEqual({ PORT: 3000, ALLOW_SIGN_UP: true, WEBHOOK_RETRY_DELAYS_MS: [60000, 300000], CORS_ALLOWED_ORIGINS: [] });
    expect(Object.isFrozen(cfg)).toBe(true);
  });

  it("parses lists and booleans", () => {
    const cfg = parseEnv(schema, { ALLOW_SIGN_UP: "false", WEBHOOK_RETRY_DELAYS_MS: "10,20", CORS_ALLOWED_ORIGINS: "https://a.test, https://b.test" });
    expect(cfg.ALLOW_SIGN_UP).toBe(false);
    expect(cfg.WEBHOOK_RETRY_DELAYS_MS).toEqual([10, 20]);
    expect(cfg.CORS_ALLOWED_ORIGINS).toEqual(["https://a.test", "https://b.test"]);
  });

  it("fails with one line naming the variable", () => {
    expect(() => parseEnv(schema, { PORT: "abc" })).toThrow(ConfigError);
    expect(() => parseEnv(schema, { PORT: "abc" })).toThrow(/^Invalid configuration: PORT: /);
    expect(() => parseEnv(schema, { WEBHOOK_RETRY_DELAYS_MS: "10,x" })).toThrow(/WEBHOOK_RETRY_DELAYS_MS/);
  });
});
