// Environment parsing, once, at start. A service declares one zod object of the variables it reads;
// `parseEnv` validates it, freezes the result and fails with one line naming the bad variable.
import { z } from "zod";

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

export function parseEnv<S extends z.ZodObject>(schema: S, env: NodeJS.ProcessEnv = process.env): Readonly<z.infer<S>> {
  // Empty strings mean "unset": `FOO= pnpm start` should behave like not setting FOO.
  const cleaned: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) if (value !== undefined && value !== "") cleaned[key] = value;
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const name = issue.path.map(String).join(".") || "environment";
    throw new ConfigError(`Invalid configuration: ${name}: ${issue.message}`);
  }
  return Object.freeze(result.data);
}

/** Field builders shared by every service's config object. */
export const env = {
  port: (fallback: number) => z.coerce.number().int().min(0).max(65535).default(fallback),
  int: (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback),
  bool: (fallback: boolean) =>
    z
      .enum(["true", "false", "1", "0", "yes", "no"], { message: "expected true or false" })
      .transform((v) => v === "true" || v === "1" || v === "yes")
      .default(fallback),
  url: () => z.url({ message: "expected an absolute URL" }),
  /** One absolute URL or several, comma-separated (a service's replicas). */
  urls: () =>
    z.string().transform((v, ctx) => {
      const parts = v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s.length > 0);
      if (parts.length === 0 || parts.some((part) => !/^https?:\/\//.test(part) || !URL.canParse(part))) {
        ctx.addIssue({ code: "custom", message: "expected an http(s) URL, or several separated by commas" });
        return z.NEVER;
      }
      return parts;
    }),
  postgresUrl: () => z.string().regex(/^postgres(ql)?:\/\//, { message: "expected a postgresql:// URL" }),
  redisUrl: () => z.string().regex(/^rediss?:\/\//, { message: "expected a redis:// URL" }),
  csv: () =>
    z.string().transform((v) =>
      v
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    ),
  intList: () =>
    z.string().transform((v, ctx) => {
      const parts = v.split(",").map((s) => Number(s.trim()));
      if (parts.length === 0 || parts.some((n) => !Number.isInteger(n) || n < 0)) {
        ctx.addIssue({ code: "custom", message: "expected a comma list of non-negative integers" });
        return z.NEVER;
      }
      return parts;
    }),
  /** A key or signing secret given in the environment. */
  secret: () => z.string().min(32, "must be at least 32 characters"),
  logLevel: () => z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
};
