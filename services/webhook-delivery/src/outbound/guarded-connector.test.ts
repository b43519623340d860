// The guarded connector through the dispatcher: TLS to a pinned address still verifies the URL's host
// name, and private targets are refused however they are spelled or resolved, without connecting.
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { type HostResolver, TARGET_UNREACHABLE_MESSAGE } from "./dispatcher";
import { dispatcher, simpleDelivery, startReceiver } from "./dispatcher.test-kit";

// Throwaway self-signed certificate for loopback TLS tests only (CN/SAN receiver.test and
// 127.0.0.1, valid 2000-2100 so the test never expires); the key protects nothing.
const TEST_TLS_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgYkqu3xhUDfqELxlW
aijNDN4mTotflYIT867+mERS3bKhRANCAAQ8DrPBz2RJIVmC/ocGF5C+Xm2b7Eti
wznoK1w4MjybEGjzPC1cR7R5urLnIK563NYvgBYa+xAg/PfD3ZnokIjK
-----END PRIVATE KEY-----
`;
const TEST_TLS_CERT = `-----BEGIN CERTIFICATE-----
MIIBdDCCARmgAwIBAgIBATAKBggqhkjOPQQDAjAYMRYwFAYDVQQDDA1yZWNlaXZl
ci50ZXN0MCAXDTAwMDEwMTAwMDAwMFoYDzIxMDAwMTAxMDAwMDAwWjAYMRYwFAYD
VQQDDA1yZWNlaXZlci50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEPA6z
wc9kSSFZgv6HBheQvl5tm+xLYsM56CtcODI8mxBo8zwtXEe0ebqy5yCuetzWL4AW
GvsQIPz3w92Z6JCIyqNSMFAwHgYDVR0RBBcwFYINcmVjZWl2ZXIudGVzdIcEfwAA
ATAPBgNVHRMBAf8EBTADAQH/MB0GA1UdDgQWBBRFgV0EW1/nAdsGM1gQcJqEjCFA
rjAKBggqhkjOPQQDAgNJADBGAiEAiSnW6e+75T7UEORJr5h4wixtjKLJeASzLWz3
JwP2ruYCIQDvGrWhxPIA3+Jj0SDul6ZUxLg1jjBWnF9eIOqkDnYMdw==
-----END CERTIFICATE-----
`;

describe("dispatcher over TLS", () => {
  let port = 0;
  let servername: string | false | null | undefined;
  const server = createHttpsServer({ key: TEST_TLS_KEY, cert: TEST_TLS_CERT }, (req, res) => {
    servername = (req.socket as import("node:tls").TLSSocket).servername;
    req.resume();
    req.on("end", () => res.end("secure ok"));
  });
  const toLoopback: HostResolver = () => Promise.resolve([{ address: "127.0.0.1", family: 4 }]);

  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it("verifies the certificate against the URL's host name although the address is pinned", async () => {
    const d = dispatcher({ resolveHost: toLoopback, trustedCaCertificates: [TEST_TLS_CERT] });
    expect(await d.send(simpleDelivery(`https://receiver.test:${port}/hook`))).toMatchObject({ ok: true, responseStatus: 200, responseBody: "secure ok" });
    expect(servername).toBe("receiver.test");
  });

  it("refuses a certificate that does not name the host", async () => {
    const d = dispatcher({ resolveHost: toLoopback, trustedCaCertificates: [TEST_TLS_CERT] });
    const outcome = await d.send(simpleDelivery(`https://impostor.test:${port}/hook`));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 0 });
    expect(outcome.responseBody).toMatch(/^TLS error: .*impostor\.test/);
  });

  it("refuses an untrusted (self-signed) certificate by default", async () => {
    const outcome = await dispatcher({ resolveHost: toLoopback }).send(simpleDelivery(`https://receiver.test:${port}/hook`));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 0 });
    expect(outcome.responseBody).toMatch(/^TLS error: self[- ]signed certificate/);
  });
});

describe("dispatcher SSRF protection (allowPrivateTargets: false)", () => {
  it.each([
    ["http://127.0.0.1:PORT/", "127.0.0.1"],
    ["http://2130706433:PORT/", "127.0.0.1"],
    ["http://0177.0.0.1:PORT/", "127.0.0.1"],
    ["http://0x7f.1:PORT/", "127.0.0.1"],
    ["http://127.1:PORT/", "127.0.0.1"],
    ["http://[::1]:PORT/", "::1"],
    ["http://[::ffff:127.0.0.1]:PORT/", "::ffff:7f00:1"],
    ["http://[::ffff:7f00:1]:PORT/", "::ffff:7f00:1"],
    ["http://0.0.0.0:PORT/", "0.0.0.0"],
    ["http://[::]:PORT/", "::"],
  ])("refuses loopback spelled %s without connecting", async (template, address) => {
    const receiver = await startReceiver((_req, res) => res.end());
    const outcome = await dispatcher({ allowPrivateTargets: false }).send(simpleDelivery(template.replace("PORT", String(receiver.port))));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 0, responseBody: TARGET_UNREACHABLE_MESSAGE, detail: `Target address is not allowed: ${address}` });
    expect(receiver.connections).toBe(0);
  });

  it("refuses a host name that resolves to loopback (localhost) without connecting", async () => {
    const receiver = await startReceiver((_req, res) => res.end());
    const outcome = await dispatcher({ allowPrivateTargets: false }).send(simpleDelivery(`http://localhost:${receiver.port}/`));
    expect(outcome.ok).toBe(false);
    expect(outcome.responseStatus).toBe(0);
    expect(outcome.responseBody).toBe(TARGET_UNREACHABLE_MESSAGE);
    expect(outcome.detail).toMatch(/^Target address is not allowed: (127\.0\.0\.1|::1)$/);
    expect(receiver.connections).toBe(0);
  });

  it.each([
    ["http://10.0.0.1/", "10.0.0.1"],
    ["http://172.16.0.1/", "172.16.0.1"],
    ["http://192.168.1.1/", "192.168.1.1"],
    ["http://169.254.169.254/latest/meta-data/", "169.254.169.254"],
    ["http://169.254.1.1/", "169.254.1.1"],
    ["http://100.100.100.200/", "100.100.100.200"],
    ["http://100.64.0.1/", "100.64.0.1"],
    ["http://224.0.0.1/", "224.0.0.1"],
    ["http://255.255.255.255/", "255.255.255.255"],
    ["http://[fd00:ec2::254]/", "fd00:ec2::254"],
    ["http://[fc00::1]/", "fc00::1"],
    ["http://[fe80::1]/", "fe80::1"],
    ["http://[ff02::1]/", "ff02::1"],
    ["http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1"],
    ["http://[2002:7f00:1::]/", "2002:7f00:1::"],
    ["https://[::ffff:a9fe:a9fe]/", "::ffff:a9fe:a9fe"],
  ])("refuses %s", async (url, address) => {
    const started = Date.now();
    const outcome = await dispatcher({ allowPrivateTargets: false }).send(simpleDelivery(url));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 0, responseBody: TARGET_UNREACHABLE_MESSAGE, detail: `Target address is not allowed: ${address}` });
    // Refused before any connect attempt, so no network time-out is involved.
    expect(Date.now() - started).toBeLessThan(1500); // well under the 2 s time-out, with room for a loaded machine
  });

  it.each([
    [["127.0.0.1"], "127.0.0.1"],
    [["93.184.216.34", "10.1.2.3"], "10.1.2.3"],
    [["2606:4700:4700::1111", "::ffff:127.0.0.1"], "::ffff:127.0.0.1"],
    [["fd12:3456::1"], "fd12:3456::1"],
  ])("refuses a host name resolving to %j", async (addresses, forbidden) => {
    const resolveHost: HostResolver = () => Promise.resolve(addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 })));
    const outcome = await dispatcher({ allowPrivateTargets: false, resolveHost }).send(simpleDelivery("https://hooks.example.test/crm"));
    // The same text as a name that does not exist: the delivery log neither shows the internal address nor tells the two apart.
    expect(outcome).toMatchObject({ ok: false, responseStatus: 0, responseBody: TARGET_UNREACHABLE_MESSAGE, detail: `Target address is not allowed: ${forbidden}` });
  });
});
