import { signInternalToken, verifyInternalToken } from "./internal-token";

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
