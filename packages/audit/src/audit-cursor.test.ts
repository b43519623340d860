import { isAppError } from "@crm/errors";
import { AuditCursorCodec } from "./audit-cursor";
import { auditPageRequest } from "./audit-page";

const BUSINESS = "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b";
const OTHER = "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6c";
const state = { filters: { action: "client.*" }, after: { occurredAt: "2026-01-01T00:00:00.000Z", id: "0193a4b2-0000-7000-8000-000000000001" } };

function code(run: () => unknown): number | undefined {
  try {
    run();
    return undefined;
  } catch (err) {
    return isAppError(err) ? err.code : -1;
  }
}

describe("audit cursors", () => {
  const codec = new AuditCursorCodec("secret-one-0123456789abcdef0123456789");

  it("round-trip for the business and scope they were made for, and hold nothing readable", () => {
    const cursor = codec.encode(BUSINESS, "log", state);
    expect(codec.decode(BUSINESS, "log", cursor)).toEqual(state);
    expect(cursor).not.toContain("client");
    expect(Buffer.from(cursor, "base64url").toString("latin1")).not.toContain("client");
  });

  it("are 400019 when altered, made with another secret, or for another business or scope", () => {
    const cursor = codec.encode(BUSINESS, "log", state);
    const flipped = `${cursor.slice(0, 20)}${cursor[20] === "A" ? "B" : "A"}${cursor.slice(21)}`;
    expect(code(() => codec.decode(BUSINESS, "log", flipped))).toBe(400019);
    expect(code(() => new AuditCursorCodec("another-secret-0123456789abcdef0123").decode(BUSINESS, "log", cursor))).toBe(400019);
    expect(code(() => codec.decode(OTHER, "log", cursor))).toBe(400019);
    expect(code(() => codec.decode(BUSINESS, "history:client:x", cursor))).toBe(400019);
    for (const bad of ["", "not a cursor", "AAAA", ["a", "b"], 42]) expect(code(() => codec.decode(BUSINESS, "log", bad))).toBe(400019);
  });

  it("carry their filters: sending the same ones again is fine, other ones are 400001", () => {
    const cursor = codec.encode(BUSINESS, "log", state);
    const scope = { codec, businessId: BUSINESS, scope: "log", filtered: true };
    expect(auditPageRequest({ cursor }, scope)).toEqual({ ...state, perPage: 10 });
    expect(auditPageRequest({ cursor, action: "client.*", perPage: "5" }, scope)).toEqual({ ...state, perPage: 5 });
    expect(code(() => auditPageRequest({ cursor, action: "user.*" }, scope))).toBe(400001);
    expect(code(() => auditPageRequest({ cursor, actorId: "k" }, scope))).toBe(400001);
  });
});
