import { AllowList, canonicalAddress, normalizeAllowedIp } from "./ip-allow-list";

describe("normalizeAllowedIp", () => {
  it.each([
    ["203.0.113.7", "203.0.113.7/32"],
    ["203.0.113.0/24", "203.0.113.0/24"],
    ["10.1.2.3/8", "10.0.0.0/8"],
    [" 192.0.2.1 ", "192.0.2.1/32"],
    ["0.0.0.0/0", "0.0.0.0/0"],
    ["2001:DB8::1", "2001:db8::1/128"],
    ["2001:0db8:0000:0000:0000:0000:0000:0001/64", "2001:db8::/64"],
    ["::/0", "::/0"],
    ["::ffff:192.0.2.1", "192.0.2.1/32"],
    ["::ffff:192.0.2.0/120", "192.0.2.0/24"],
    ["::ffff:0:0/96", "0.0.0.0/0"],
  ])("%s → %s", (entry, expected) => {
    expect(normalizeAllowedIp(entry)).toBe(expected);
  });

  it.each(["", "nope", "256.1.1.1", "127.1", "0x7f.0.0.1", "10.0.0.0/33", "10.0.0.0/", "10.0.0.0/-1", "10.0.0.0/8/8", "::1/129", "1.2.3.4/ 8", "example.com"])(
    "refuses %j",
    (entry) => {
      expect(normalizeAllowedIp(entry)).toBeUndefined();
    },
  );
});

describe("AllowList", () => {
  const list = new AllowList(["203.0.113.0/24", "2001:db8::/32", "192.0.2.9/32"]);

  it.each([
    ["203.0.113.200", true],
    ["203.0.114.1", false],
    ["192.0.2.9", true],
    ["192.0.2.10", false],
    ["::ffff:203.0.113.5", true],
    ["2001:db8:1::5", true],
    ["2001:db9::1", false],
    ["not an address", false],
  ])("%s → %s", (address, allowed) => {
    expect(list.allows(address)).toBe(allowed);
  });

  it("allows nothing when empty", () => {
    expect(new AllowList([]).allows("127.0.0.1")).toBe(false);
  });
});

describe("canonicalAddress", () => {
  it.each([
    ["::ffff:127.0.0.1", "127.0.0.1"],
    ["127.0.0.1", "127.0.0.1"],
    ["2001:0DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["", ""],
  ])("%j → %j", (address, shown) => {
    expect(canonicalAddress(address)).toBe(shown);
  });
});
