import { isRedactedFormOf, redactUrlCredentials } from "./url-credentials";

describe("redactUrlCredentials", () => {
  it.each([
    ["https://example.com/hooks/crm", "https://example.com/hooks/crm"],
    ["http://127.0.0.1:8080/h?x=1", "http://127.0.0.1:8080/h?x=1"],
    ["https://alice:s3cr%40t@example.com/h", "https://alice:****@example.com/h"],
    ["https://alice:pw@example.com:8443/a/b?q=1#f", "https://alice:****@example.com:8443/a/b?q=1#f"],
    ["https://:pw@example.com/", "https://:****@example.com/"],
    ["https://token123@example.com/h", "https://****@example.com/h"],
  ])("%s -> %s", (stored, shown) => {
    expect(redactUrlCredentials(stored)).toBe(shown);
    expect(() => new URL(shown)).not.toThrow();
    expect(shown).not.toMatch(/s3cr|pw@|token123/);
  });

  it("recognises the shown form sent back, and nothing else", () => {
    const stored = "https://alice:pw@example.com/h";
    expect(isRedactedFormOf("https://alice:****@example.com/h", stored)).toBe(true);
    expect(isRedactedFormOf(stored, stored)).toBe(false);
    expect(isRedactedFormOf("https://alice:****@example.com/other", stored)).toBe(false);
    expect(isRedactedFormOf("https://example.com/h", "https://example.com/h")).toBe(false);
  });
});
