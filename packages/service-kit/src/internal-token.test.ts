import { createSecretKey } from "node:crypto";
import jwt from "jsonwebtoken";
import { INTERNAL_API_VERSION, signInternalToken, verifyInternalToken } from "./internal-token";

const secret = "s".repeat(40);
const principal = {
  businessId: "0193a1b2-0000-7000-8000-000000000000",
  authType: "jwt" as const,
  userId: "0193a1b2-0000-7000-8000-000000000001",
  apiKeyId: null,
  sessionId: "session",
  jti: "jti",
  permissions: ["clients.read"],
};

describe("internal token verification (remembered until expiry)", () => {
  afterEach(() => jest.useRealTimers());

  it("refuses a remembered token once it has expired", () => {
    jest.useFakeTimers({ now: Date.now() });
    const token = signInternalToken({ principal }, secret, 2);
    expect(verifyInternalToken(token, secret).principal).toEqual(principal);
    expect(verifyInternalToken(token, secret).principal).toEqual(principal);
    jest.advanceTimersByTime(3000);
    expect(() => verifyInternalToken(token, secret)).toThrow(expect.objectContaining({ code: 401000 }));
  });

  it("refuses a remembered token under another secret", () => {
    const token = signInternalToken({ principal }, secret);
    verifyInternalToken(token, secret);
    expect(() => verifyInternalToken(token, "t".repeat(40))).toThrow(expect.objectContaining({ code: 401000 }));
  });

  it("hands out claims no request can change for the next one", () => {
    const claims = verifyInternalToken(signInternalToken({ principal }, secret), secret);
    expect(Object.isFrozen(claims.principal)).toBe(true);
    expect(() => (claims.principal!.permissions as string[]).push("clients.delete")).toThrow();
  });
});

describe("internal interface version (issue 38: neighbouring releases side by side)", () => {
  const key = createSecretKey(Buffer.from(secret, "utf8"));
  const signedWith = (payload: object) => jwt.sign(payload, key, { algorithm: "HS256", audience: "crm-internal", issuer: "crm-gateway", expiresIn: 60 });

  it("every token says which version its caller speaks", () => {
    expect((jwt.decode(signInternalToken({ principal }, secret)) as { v: unknown }).v).toBe(INTERNAL_API_VERSION);
    expect(INTERNAL_API_VERSION).toBe(1);
  });

  it("a token without a version (a release before the claim) is version 1", () => {
    expect(verifyInternalToken(signedWith({ principal }), secret).principal).toEqual(principal);
  });

  it("a caller of another version is told to try again (503000 with Retry-After), not that it is unauthenticated", () => {
    for (const v of [2, 0, "1"]) {
      expect(() => verifyInternalToken(signedWith({ principal, v }), secret)).toThrow(expect.objectContaining({ code: 503000, retryAfterS: 5 }));
    }
  });
});
