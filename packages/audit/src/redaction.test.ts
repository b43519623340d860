import { AUDIT_REDACTED } from "@crm/contracts";
import { auditRow } from "./audit-entry";
import { SYSTEM_CONTEXT } from "./audit-context";
import { redactSecrets } from "./redaction";

describe("redactSecrets", () => {
  it("keeps custom fields as they are, whatever the business named them (a record's changes equal its previousAttributes)", () => {
    const created = { id: "c1", customFields: { token: "ext-1", key: "K-9", password: null } };
    expect(redactSecrets(created)).toEqual(created);
    const updated = { customFields: { from: { token: "ext-1" }, to: { token: "ext-2" } }, secret: "whsec_x" };
    expect(redactSecrets(updated)).toEqual({ customFields: { from: { token: "ext-1" }, to: { token: "ext-2" } }, secret: AUDIT_REDACTED });
  });

  it("replaces passwords, key material and secrets at any depth, and leaves everything else as it was", () => {
    const input = {
      email: "a@example.test",
      password: "hunter2-long",
      nested: { currentPassword: "x", passwordHash: "scrypt$...", list: [{ secret: "whsec_abc", name: "kept" }] },
      key: "svc_live_123",
      keyDigest: "d",
      keyPrefix: "svc_live",
      previousSecret: "whsec_old",
      refreshToken: "r",
      accessToken: "a",
      missing: null,
      secretPrefix: "whsec_a",
      when: new Date(0),
    };
    const out = redactSecrets(input);
    expect(out).toEqual({
      email: "a@example.test",
      password: AUDIT_REDACTED,
      nested: { currentPassword: AUDIT_REDACTED, passwordHash: AUDIT_REDACTED, list: [{ secret: AUDIT_REDACTED, name: "kept" }] },
      key: AUDIT_REDACTED,
      keyDigest: AUDIT_REDACTED,
      keyPrefix: "svc_live",
      previousSecret: AUDIT_REDACTED,
      refreshToken: AUDIT_REDACTED,
      accessToken: AUDIT_REDACTED,
      missing: null,
      secretPrefix: "whsec_a",
      when: new Date(0),
    });
    expect(input.password).toBe("hunter2-long");
    expect(JSON.stringify(out)).not.toMatch(/hunter2|whsec_abc|svc_live_123|scrypt/);
  });

  it("is applied to every entry a service writes: an update's {from, to} of a password is one [REDACTED]", () => {
    const row = auditRow(
      "0193a4b2-7c5d-7e8f-9a0b-1c2d3e4f5a6b",
      { action: "user.updated", target: { type: "user", id: "u" }, changes: { password: { from: "old-one", to: "new-one" } } },
      SYSTEM_CONTEXT,
      new Date(),
    );
    expect(row.changes).toEqual({ password: AUDIT_REDACTED });
  });
});
