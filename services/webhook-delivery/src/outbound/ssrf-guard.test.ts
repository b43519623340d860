import { BlockList } from "node:net";
import { checkTargetUrl, forbiddenCategory, isForbiddenAddress } from "./ssrf-guard";

describe("isForbiddenAddress: IPv4", () => {
  it.each([
    ["0.0.0.0", "unspecified"],
    ["0.1.2.3", "unspecified"],
    ["127.0.0.1", "loopback"],
    ["127.255.255.254", "loopback"],
    ["10.0.0.1", "private"],
    ["10.255.255.255", "private"],
    ["172.16.0.1", "private"],
    ["172.31.255.255", "private"],
    ["192.168.0.1", "private"],
    ["192.168.255.255", "private"],
    ["169.254.0.1", "link-local"],
    ["169.254.169.254", "cloud-metadata"],
    ["169.254.170.2", "cloud-metadata"],
    ["100.100.100.200", "cloud-metadata"],
    ["192.0.0.192", "cloud-metadata"],
    ["100.64.0.1", "shared-address-space"],
    ["100.127.255.255", "shared-address-space"],
    ["224.0.0.1", "multicast"],
    ["239.255.255.250", "multicast"],
    ["240.0.0.1", "reserved"],
    ["255.255.255.255", "reserved"],
    ["192.0.2.10", "documentation"],
    ["198.51.100.10", "documentation"],
    ["203.0.113.10", "documentation"],
    ["198.18.0.1", "benchmarking"],
    ["198.19.255.255", "benchmarking"],
  ])("%s is forbidden (%s)", (ip, category) => {
    expect(isForbiddenAddress(ip)).toBe(true);
    expect(forbiddenCategory(ip)).toBe(category);
  });

  it.each([
    "8.8.8.8",
    "1.1.1.1",
    "93.184.216.34",
    "172.15.255.255",
    "172.32.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "169.253.255.255",
    "192.169.0.1",
    "11.0.0.1",
    "126.255.255.255",
    "128.0.0.1",
    "223.255.255.255",
    "198.17.255.255",
    "198.20.0.0",
  ])("%s is allowed", (ip) => {
    expect(isForbiddenAddress(ip)).toBe(false);
  });
});

describe("isForbiddenAddress: IPv6", () => {
  it.each([
    ["::", "unspecified"],
    ["::1", "loopback"],
    ["0:0:0:0:0:0:0:1", "loopback"],
    ["[::1]", "loopback"],
    ["::ffff:127.0.0.1", "loopback"],
    ["::ffff:7f00:1", "loopback"],
    ["::FFFF:7F00:0001", "loopback"],
    ["::ffff:10.1.2.3", "private"],
    ["::ffff:169.254.169.254", "cloud-metadata"],
    ["::ffff:0:127.0.0.1", "loopback"], // IPv4-translated
    ["::127.0.0.1", "ipv4-embedding"], // IPv4-compatible (deprecated)
    ["::7f00:1", "ipv4-embedding"],
    ["::8.8.8.8", "ipv4-embedding"],
    ["64:ff9b::127.0.0.1", "loopback"], // NAT64 well-known prefix
    ["64:ff9b::7f00:1", "loopback"],
    ["64:ff9b::a9fe:a9fe", "cloud-metadata"],
    ["64:ff9b:1::1", "ipv4-embedding"], // local-use NAT64
    ["2002:7f00:1::", "loopback"], // 6to4 of 127.0.0.1
    ["2002:c0a8:101::1", "private"], // 6to4 of 192.168.1.1
    ["fc00::1", "unique-local"],
    ["fdff:ffff::1", "unique-local"],
    ["fd00:ec2::254", "cloud-metadata"],
    ["fe80::1", "link-local"],
    ["fe80::1%eth0", "link-local"],
    ["febf::1", "link-local"],
    ["fec0::1", "private"],
    ["ff02::1", "multicast"],
    ["2001:db8::1", "documentation"],
    ["3fff::1", "documentation"],
    ["2001:2::1", "benchmarking"],
    ["2001::1", "ipv4-embedding"], // Teredo
    ["100::1", "not-global-unicast"], // discard-only
    ["4000::1", "not-global-unicast"],
  ])("%s is forbidden (%s)", (ip, category) => {
    expect(forbiddenCategory(ip)).toBe(category);
    expect(isForbiddenAddress(ip)).toBe(true);
  });

  it.each(["2606:4700:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001:82a::200e", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1", "2001:db9::1", "2003::1"])(
    "%s is allowed",
    (ip) => {
      expect(isForbiddenAddress(ip)).toBe(false);
    },
  );
});

describe("isForbiddenAddress fails closed on anything that is not a canonical address", () => {
  it.each(["", "localhost", "example.com", "0177.0.0.1", "2130706433", "0x7f.1", "127.1", "1.2.3", "256.0.0.1", "::ffff:999.0.0.1", "[::1", ":::1", "1::2::3"])("%p", (input) => {
    expect(isForbiddenAddress(input)).toBe(true);
    expect(forbiddenCategory(input)).toBe("invalid");
  });
});

describe("isForbiddenAddress agrees with node's BlockList on the core ranges", () => {
  const blockList = new BlockList();
  for (const [net, prefix] of [
    ["0.0.0.0", 8],
    ["10.0.0.0", 8],
    ["100.64.0.0", 10],
    ["127.0.0.0", 8],
    ["169.254.0.0", 16],
    ["172.16.0.0", 12],
    ["192.168.0.0", 16],
    ["224.0.0.0", 4],
    ["240.0.0.0", 4],
  ] as const) {
    blockList.addSubnet(net, prefix, "ipv4");
  }
  // A deterministic spread over the whole IPv4 space, including every range edge above.
  const samples: string[] = [];
  for (let i = 0; i < 4096; i += 1) {
    const value = (Math.imul(i, 0x9e3779b1) >>> 0) ^ (i << 3);
    samples.push([value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff].join("."));
  }
  for (const edge of [
    "9.255.255.255",
    "11.0.0.0",
    "100.63.255.255",
    "100.128.0.0",
    "126.255.255.255",
    "128.0.0.0",
    "172.15.255.255",
    "172.32.0.0",
    "192.167.255.255",
    "192.169.0.0",
    "223.255.255.255",
  ])
    samples.push(edge);

  it("every sample blocked by BlockList is forbidden", () => {
    for (const ip of samples) {
      if (blockList.check(ip, "ipv4")) expect([ip, isForbiddenAddress(ip)]).toEqual([ip, true]);
    }
  });

  it("samples outside BlockList and outside the extra special-purpose ranges are allowed", () => {
    const extra = new BlockList();
    for (const [net, prefix] of [
      ["192.0.0.0", 24],
      ["192.0.2.0", 24],
      ["192.88.99.0", 24],
      ["198.18.0.0", 15],
      ["198.51.100.0", 24],
      ["203.0.113.0", 24],
    ] as const) {
      extra.addSubnet(net, prefix, "ipv4");
    }
    for (const ip of samples) {
      if (!blockList.check(ip, "ipv4") && !extra.check(ip, "ipv4")) expect([ip, isForbiddenAddress(ip)]).toEqual([ip, false]);
    }
  });
});

describe("checkTargetUrl", () => {
  it.each(["https://hooks.example.com/crm", "http://hooks.example.com:8080/a?b=c", "https://8.8.8.8/x", "https://[2606:4700:4700::1111]/x"])("accepts %s", (url) => {
    const result = checkTargetUrl(url);
    expect(result.ok).toBe(true);
  });

  it.each([
    "",
    "not a url",
    "/relative/path",
    "hooks.example.com/crm",
    "ftp://example.com/x",
    "file:///etc/passwd",
    "javascript:alert(1)",
    "ws://example.com/x",
    "mailto:a@example.com",
  ])("refuses %p as not an absolute http(s) URL", (url) => {
    expect(checkTargetUrl(url)).toEqual({ ok: false, message: "Must be an absolute http: or https: URL" });
  });

  // Every spelling the WHATWG parser folds into a forbidden literal address.
  it.each([
    ["http://127.0.0.1/", "127.0.0.1"],
    ["http://2130706433/", "127.0.0.1"],
    ["http://0177.0.0.1/", "127.0.0.1"],
    ["http://0x7f.1/", "127.0.0.1"],
    ["http://0x7f000001/", "127.0.0.1"],
    ["http://127.1/", "127.0.0.1"],
    ["http://127.0.0.1./", "127.0.0.1"],
    ["http://0/", "0.0.0.0"],
    ["http://[::1]:8080/", "::1"],
    ["http://[0:0:0:0:0:0:0:1]/", "::1"],
    ["http://[::ffff:127.0.0.1]/", "::ffff:7f00:1"],
    ["http://[::ffff:7f00:1]/", "::ffff:7f00:1"],
    ["https://169.254.169.254/latest/meta-data/", "169.254.169.254"],
    ["http://0xa9fea9fe/", "169.254.169.254"],
    ["http://[fd00:ec2::254]/", "fd00:ec2::254"],
    ["http://100.100.100.200/", "100.100.100.200"],
    ["http://10.0.0.1/", "10.0.0.1"],
    ["http://192.168.1.1/", "192.168.1.1"],
    ["http://[fe80::1]/", "fe80::1"],
    ["http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1"],
    ["http://[2002:7f00:1::]/", "2002:7f00:1::"],
  ])("refuses %s (host %s)", (url, host) => {
    expect(checkTargetUrl(url)).toEqual({ ok: false, message: `Target address is not allowed: ${host}` });
  });

  it("accepts forbidden literals when private targets are allowed", () => {
    const result = checkTargetUrl("http://127.0.0.1:3000/hook", { allowPrivateTargets: true });
    expect(result.ok && result.url.href).toBe("http://127.0.0.1:3000/hook");
  });

  it("does not resolve host names at create time (resolution happens per delivery)", () => {
    expect(checkTargetUrl("http://localhost:3000/hook").ok).toBe(true);
  });
});
