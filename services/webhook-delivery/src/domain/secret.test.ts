import { generateWebhookSecret, secretPrefix } from "./secret";

describe("generateWebhookSecret", () => {
  it("is whsec_ followed by base64 of 32 random bytes", () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(secret.slice("whsec_".length), "base64")).toHaveLength(32);
  });

  it("differs on every call", () => {
    const secrets = new Set(Array.from({ length: 50 }, () => generateWebhookSecret()));
    expect(secrets.size).toBe(50);
  });
});

describe("secretPrefix", () => {
  it("is the first 12 characters", () => {
    const secret = generateWebhookSecret();
    expect(secretPrefix(secret)).toBe(secret.slice(0, 12));
    expect(secretPrefix(secret)).toHaveLength(12);
    expect(secretPrefix(secret).startsWith("whsec_")).toBe(true);
  });
});
