// Inputs a careless or hostile client can send, through the gateway, in single-machine mode: none
// may produce a 5xx, each gets the contract's envelope, and every response matches the OpenAPI document.
import { randomUUID } from "node:crypto";
import net from "node:net";
import { validatedEmbeddedProduct } from "./validated-product";

jest.setTimeout(120_000);

const suite = validatedEmbeddedProduct({ RATE_LIMIT_MAX: "100000" });
const { api, owner } = suite;

const NUL = "\u0000";

function rawStatusLine(request: string): Promise<string> {
  const { hostname, port } = new URL(suite.product.baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(request));
    let received = "";
    socket.setTimeout(10_000, () => socket.destroy(new Error("no answer")));
    socket.on("data", (chunk) => {
      received += chunk.toString("latin1");
      if (received.includes("\r\n")) {
        socket.destroy();
        resolve(received.slice(0, received.indexOf("\r\n")));
      }
    });
    socket.on("error", reject);
  });
}
const nulRefused = (path: string) => ({
  success: false,
  error: { code: 400001, message: "Validation failed", details: [{ path, message: "Must not contain a NUL character" }] },
});

describe("a NUL character in text (PostgreSQL text cannot hold it)", () => {
  it("is refused with 400001 naming the field on sign-in (unauthenticated), client and webhook create", async () => {
    const anonymous = api();
    const signIn = await anonymous.call("POST", "/api/v1/auth/sign-in", { email: `a${NUL}@x.io`, password: "correct-horse-battery" });
    expect([signIn.status, signIn.body]).toEqual([400, nulRefused("email")]);

    const a = await owner();
    const client = await a.call("POST", "/api/v1/client", { firstName: `Ada${NUL}`, lastName: "Lovelace" });
    expect([client.status, client.body]).toEqual([400, nulRefused("firstName")]);
    const webhook = await a.call("POST", "/api/v1/webhook", { url: `https://example.test/hook${NUL}`, events: ["client.created"] });
    expect([webhook.status, webhook.body]).toEqual([400, nulRefused("url")]);
    const list = await a.call("GET", "/api/v1/client");
    expect(list.body.meta.total).toBe(0);
  });

  it("is refused in every other text input, nested paths included", async () => {
    const a = await owner();
    const clientId = (await a.call("POST", "/api/v1/client", { firstName: "Ada", lastName: "Lovelace" })).body.data.id as string;
    const cases: Array<[string, string, unknown, string]> = [
      ["user create", "/api/v1/user", { email: `m-${randomUUID()}@x.io`, password: "correct-horse-battery", firstName: `M${NUL}` }, "firstName"],
      ["api-key name", "/api/v1/api-key", { name: `ci${NUL}`, scopes: ["clients.read"] }, "name"],
      ["webhook description", "/api/v1/webhook", { url: "https://example.test/hook", events: ["client.created"], description: `d${NUL}` }, "description"],
      ["contact value", "/api/v1/contact", { clientId, type: "EMAIL", value: `x${NUL}@x.io` }, "value"],
      [
        "invoice item description",
        "/api/v1/invoice",
        {
          clientId,
          items: [
            { description: "ok", quantity: 1, unitPrice: 1 },
            { description: `i${NUL}`, quantity: 1, unitPrice: 2 },
          ],
        },
        "items.1.description",
      ],
    ];
    for (const [name, path, body, field] of cases) {
      const res = await a.call("POST", path, body);
      expect([name, res.status, res.body]).toEqual([name, 400, nulRefused(field)]);
    }
    const update = await a.call("PATCH", `/api/v1/client/${clientId}`, { notes: `n${NUL}` });
    expect([update.status, update.body]).toEqual([400, nulRefused("notes")]);
  });

  it("in query parameters and path ids never gives a 5xx", async () => {
    const a = await owner();
    const where = await a.call("GET", "/api/v1/client?where=firstName:a%00b");
    expect([where.status, where.body.error.code]).toEqual([400, 400019]);
    for (const path of ["/api/v1/client/a%00b", "/api/v1/invoice/a%00b", "/api/v1/webhook/a%00b", "/api/v1/user/a%00b"]) {
      const res = await a.call("GET", path);
      expect([path, res.status]).toEqual([path, 404]);
    }
    const orderBy = await a.call("GET", "/api/v1/client?orderBy=firstName%00:asc");
    expect(orderBy.status).toBe(400);
    const include = await a.call("GET", "/api/v1/client?include=contacts%00");
    expect(include.status).toBe(400);
    // Node's HTTP parser refuses a control character in a header (Idempotency-Key here) before any code runs.
    const statusLine = await rawStatusLine(
      `POST /api/v1/client HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${a.accessToken}\r\nIdempotency-Key: a${NUL}b\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(statusLine).toBe("HTTP/1.1 400 Bad Request");
  });
});

describe("Idempotency-Key replay of a one-time secret", () => {
  it("replays POST /api-key byte for byte with Idempotent-Replayed: true", async () => {
    const a = await owner();
    const headers = { "idempotency-key": `key-${randomUUID()}` };
    const created = await a.call("POST", "/api/v1/api-key", { name: "ci", scopes: ["clients.read"] }, headers);
    expect(created.status).toBe(201);
    expect(created.body.data.key).toMatch(/^svc_/);
    const replayed = await a.call("POST", "/api/v1/api-key", { name: "ci", scopes: ["clients.read"] }, headers);
    expect(replayed.status).toBe(201);
    expect(replayed.text).toBe(created.text);
    expect(replayed.headers.get("idempotent-replayed")).toBe("true");
  });
});
