// An API key created while PostgreSQL's connection is cut at the COMMIT (issue 42), through the
// harness's TCP proxy: the one-time secret is answered when the server committed, a plain 503000 when
// it did not, and a 503000 marked in doubt (OUTCOME_IN_DOUBT_HEADER, for the gateway, which then
// refuses a retry rather than create a second key) when it cannot be asked. PostgreSQL only: the
// embedded database has no connection to cut.
import { OUTCOME_IN_DOUBT_HEADER } from "@crm/errors";
import { describePostgres, FaultProxy, isPostgresCommit, testInfra } from "@crm/testing";
import { accountHelpers, type Harness, openHarness, SUITE_ENV, sha256 } from "./harness";

describePostgres("identity: an API key whose COMMIT loses its connection", () => {
  let proxy: FaultProxy;
  let h: Harness;
  const { signUp } = accountHelpers(() => h);

  beforeAll(async () => {
    const target = new URL(testInfra.databaseUrl!);
    proxy = await FaultProxy.start({ target: { host: target.hostname, port: Number(target.port || 5432) } });
    h = await openHarness("postgres", SUITE_ENV, { databaseVia: proxy.address });
  });
  afterAll(async () => {
    proxy?.restore();
    await h?.close();
    await proxy?.close();
  });
  afterEach(() => proxy.restore());

  const keysNamed = (businessId: string, name: string) => h.prisma.apiKey.count({ where: { businessId, name } });

  it("committed, its answer lost: 201 with the key, which works; one key made", async () => {
    const { principal } = await signUp();
    const sprung = proxy.dropAt(isPostgresCommit, { deliver: true });
    const res = await h.as(principal, "post", "/api/v1/api-key").send({ name: "settled", scopes: ["clients.read"] });
    await sprung;
    expect(res.status).toBe(201);
    expect(res.headers[OUTCOME_IN_DOUBT_HEADER]).toBeUndefined();
    const row = await h.prisma.apiKey.findUniqueOrThrow({ where: { id: res.body.data.id } });
    expect(row.keyDigest).toBe(sha256(res.body.data.key));
    expect(await keysNamed(principal.businessId, "settled")).toBe(1);
  });

  it("the COMMIT never reached the server: 503000 not marked (the gateway frees the key), no key made", async () => {
    const { principal } = await signUp();
    const sprung = proxy.dropAt(isPostgresCommit, { deliver: false });
    const res = await h.as(principal, "post", "/api/v1/api-key").send({ name: "rolled-back" });
    await sprung;
    expect([res.status, res.body.error?.code, res.headers["retry-after"]]).toEqual([503, 503000, "1"]);
    expect(res.headers[OUTCOME_IN_DOUBT_HEADER]).toBeUndefined();
    expect(await keysNamed(principal.businessId, "rolled-back")).toBe(0);
  });

  it("committed, but the server cannot be asked in time: 503000 marked in doubt, and the key was made", async () => {
    const { principal } = await signUp();
    const sprung = proxy.dropAt(isPostgresCommit, { deliver: true, cutAfter: true });
    const res = await h.as(principal, "post", "/api/v1/api-key").send({ name: "unknown" });
    await sprung;
    expect([res.status, res.body.error?.code, res.headers["retry-after"]]).toEqual([503, 503000, "1"]);
    expect(res.headers[OUTCOME_IN_DOUBT_HEADER]).toBe("1");
    expect(JSON.stringify(res.body)).not.toContain("svc_");
    proxy.restore();
    // Why the gateway must not run the retry: the first request did create the key.
    expect(await keysNamed(principal.businessId, "unknown")).toBe(1);
  });
});
