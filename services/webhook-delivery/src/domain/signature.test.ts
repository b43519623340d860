import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { serializePayload } from "./payload";
import { generateWebhookSecret } from "./secret";
import { buildDeliveryHeaders, computeServiceSignature, serviceSignatureHeader, verifyServiceSignature } from "./signature";

/** A receiver written from interface §6 alone, sharing no code with the module under test. */
function receiverVerifies(secret: string, rawBody: string, header: string): boolean {
  const key = createHash("sha256").update(secret).digest("hex");
  const expected = createHmac("sha256", key).update(rawBody).digest("hex");
  const received = header.replace(/^sha256=/, "");
  return received.length === expected.length && timingSafeEqual(Buffer.from(received), Buffer.from(expected));
}

describe("interface signature (X-Service-Signature)", () => {
  const secret = "whsec_dGVzdC1zZWNyZXQtZm9yLXNpZ25pbmctMzItYnl0ZXM=";
  const body = serializePayload({ event: "client.created", data: { id: "c1", name: "Zoë ✓" }, businessId: "b1", timestamp: new Date("2024-01-02T03:04:05.678Z") });

  it("is sha256=<lowercase hex HMAC> keyed by the hex SHA-256 of the secret as text", () => {
    const header = serviceSignatureHeader(secret, body);
    expect(header).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(receiverVerifies(secret, body, header)).toBe(true);
  });

  it("uses the hex digest TEXT as key, not the raw digest bytes nor the secret itself", () => {
    const rawKey = createHash("sha256").update(secret).digest();
    const signature = computeServiceSignature(secret, body);
    expect(signature).not.toBe(createHmac("sha256", rawKey).update(body).digest("hex"));
    expect(signature).not.toBe(createHmac("sha256", secret).update(body).digest("hex"));
  });

  it("is over the raw string: any re-serialisation breaks it", () => {
    const header = serviceSignatureHeader(secret, body);
    const reserialised = JSON.stringify(JSON.parse(body), null, 1);
    expect(receiverVerifies(secret, reserialised, header)).toBe(false);
  });

  it("verifyServiceSignature accepts the right header and rejects everything else", () => {
    const header = serviceSignatureHeader(secret, body);
    expect(verifyServiceSignature(secret, body, header)).toBe(true);
    expect(verifyServiceSignature(secret, body + " ", header)).toBe(false);
    expect(verifyServiceSignature(generateWebhookSecret(), body, header)).toBe(false);
    expect(verifyServiceSignature(secret, body, header.slice("sha256=".length))).toBe(false);
    expect(verifyServiceSignature(secret, body, header.toUpperCase())).toBe(false);
    expect(verifyServiceSignature(secret, body, "sha256=")).toBe(false);
    expect(verifyServiceSignature(secret, body, "sha256=zz")).toBe(false);
    expect(verifyServiceSignature(secret, body, undefined)).toBe(false);
    expect(verifyServiceSignature(secret, body, null)).toBe(false);
  });
});

describe("buildDeliveryHeaders", () => {
  const secret = generateWebhookSecret();
  const body = serializePayload({ event: "client.created", data: { id: "c1" }, businessId: "b1", timestamp: new Date() });
  const sentAt = new Date();
  const headers = buildDeliveryHeaders({ deliveryId: "d-123", event: "client.created", secret, body, timestamp: sentAt });

  it("carries every interface header", () => {
    expect(headers["Content-Type"]).toBe("application/json");
    expect(headers["X-Service-Event"]).toBe("client.created");
    expect(headers["X-Service-Delivery-Id"]).toBe("d-123");
    expect(headers["User-Agent"]).toMatch(/^crm-webhooks\//);
    expect(receiverVerifies(secret, body, headers["X-Service-Signature"]!)).toBe(true);
  });

  it("carries Standard Webhooks headers that the reference library verifies", () => {
    expect(headers["webhook-id"]).toBe("d-123");
    expect(headers["webhook-timestamp"]).toBe(String(Math.floor(sentAt.getTime() / 1000)));
    expect(headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it("fails Standard Webhooks verification for a tampered body, id or another secret", () => {
    expect(() => new Webhook(secret).verify(body.replace("c1", "c2"), headers)).toThrow();
    expect(() => new Webhook(secret).verify(body, { ...headers, "webhook-id": "d-124" })).toThrow();
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it("computes the Standard Webhooks signature as documented (independent re-implementation)", () => {
    const key = Buffer.from(secret.slice("whsec_".length), "base64");
    const expected = createHmac("sha256", key).update(`d-123.${headers["webhook-timestamp"]}.${body}`).digest("base64");
    expect(headers["webhook-signature"]).toBe(`v1,${expected}`);
  });

  it("signs the same body identically on every attempt; only the Standard Webhooks timestamp moves", () => {
    const later = buildDeliveryHeaders({ deliveryId: "d-123", event: "client.created", secret, body, timestamp: new Date(sentAt.getTime() + 60_000) });
    expect(later["X-Service-Signature"]).toBe(headers["X-Service-Signature"]);
    expect(later["X-Service-Delivery-Id"]).toBe(headers["X-Service-Delivery-Id"]);
    expect(later["webhook-timestamp"]).not.toBe(headers["webhook-timestamp"]);
  });
});

describe("buildDeliveryHeaders during a rotation's grace period (extensions §E1.1)", () => {
  const current = generateWebhookSecret();
  const previous = generateWebhookSecret();
  const body = serializePayload({ event: "client.updated", data: { id: "c1", name: "Zoë ✓ 東京" }, businessId: "b1", timestamp: new Date() });
  const sentAt = new Date();
  const headers = buildDeliveryHeaders({ deliveryId: "d-9", event: "client.updated", secret: current, previousSecret: previous, body, timestamp: sentAt });

  it("carries two space-separated v1 signatures, the new secret's first, then the old one's", () => {
    const key = (secret: string) => Buffer.from(secret.slice("whsec_".length), "base64");
    const expected = (secret: string) => "v1," + createHmac("sha256", key(secret)).update(`d-9.${headers["webhook-timestamp"]}.${body}`).digest("base64");
    expect(headers["webhook-signature"]).toBe(`${expected(current)} ${expected(previous)}`);
  });

  it("verifies with either secret in the reference library, and with no other", () => {
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(generateWebhookSecret()).verify(body, headers)).toThrow();
  });

  it("keeps X-Service-Signature on the new secret only", () => {
    expect(receiverVerifies(current, body, headers["X-Service-Signature"]!)).toBe(true);
    expect(receiverVerifies(previous, body, headers["X-Service-Signature"]!)).toBe(false);
  });
});
