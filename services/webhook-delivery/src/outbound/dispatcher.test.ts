import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { serializePayload } from "../domain/payload";
import { generateWebhookSecret } from "../domain/secret";
import { buildDeliveryHeaders } from "../domain/signature";
import { createDispatcher, TARGET_UNREACHABLE_MESSAGE, type HostResolver } from "./dispatcher";
import { dispatcher as kitDispatcher, simpleDelivery, startReceiver } from "./dispatcher.test-kit";

// Both ways: UNDICI_DISPATCH=false sends through undici's request() (docs/performance.md D10).
describe.each([true, false])("dispatcher against loopback receivers (UNDICI_DISPATCH=%s)", (undiciDispatch) => {
  const dispatcher = (options: Parameters<typeof kitDispatcher>[0] = {}) => kitDispatcher({ undiciDispatch, ...options });

  it("delivers the exact signed bytes with every header; a 200 is a success", async () => {
    const receiver = await startReceiver((_req, res) => res.end("thanks"));
    const secret = generateWebhookSecret();
    const body = serializePayload({ event: "client.created", data: { id: "c1", firstName: "Zoë", lastName: "Ω" }, businessId: "b1", timestamp: new Date() });
    const headers = buildDeliveryHeaders({ deliveryId: "delivery-1", event: "client.created", secret, body, timestamp: new Date() });

    const outcome = await dispatcher().send({ url: receiver.url, headers, body });

    expect(outcome).toMatchObject({ ok: true, responseStatus: 200, responseBody: "thanks" });
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
    expect(receiver.requests).toHaveLength(1);
    const received = receiver.requests[0]!;
    expect(received.method).toBe("POST");
    expect(received.url).toBe("/hooks/crm?source=test");
    expect(received.body).toBe(body);
    expect(received.headers["content-type"]).toBe("application/json");
    expect(received.headers["x-service-event"]).toBe("client.created");
    expect(received.headers["x-service-delivery-id"]).toBe("delivery-1");
    expect(received.headers["user-agent"]).toBe("crm-webhooks/1");

    // The receiver's side of interface §6 Signature, written independently over the raw body.
    const signingKey = createHash("sha256").update(secret).digest("hex");
    const expected = createHmac("sha256", signingKey).update(received.body).digest("hex");
    const header = String(received.headers["x-service-signature"]);
    expect(header.startsWith("sha256=")).toBe(true);
    expect(timingSafeEqual(Buffer.from(header.slice(7)), Buffer.from(expected))).toBe(true);

    // And the Standard Webhooks side, with the reference library.
    const standardHeaders = {
      "webhook-id": String(received.headers["webhook-id"]),
      "webhook-timestamp": String(received.headers["webhook-timestamp"]),
      "webhook-signature": String(received.headers["webhook-signature"]),
    };
    expect(standardHeaders["webhook-id"]).toBe("delivery-1");
    expect(new Webhook(secret).verify(received.body, standardHeaders)).toEqual(JSON.parse(body));
  });

  it.each([201, 202, 204, 299])("treats %i as success", async (status) => {
    const receiver = await startReceiver((_req, res) => {
      res.statusCode = status;
      res.end();
    });
    expect(await dispatcher().send(simpleDelivery(receiver.url))).toMatchObject({ ok: true, responseStatus: status, responseBody: "" });
  });

  it("records a 500 and keeps only the first 4096 characters of its body", async () => {
    const longBody = "e".repeat(4000) + "F".repeat(6000);
    const receiver = await startReceiver((_req, res) => {
      res.statusCode = 500;
      res.end(longBody);
    });
    const outcome = await dispatcher().send(simpleDelivery(receiver.url));
    expect(outcome.ok).toBe(false);
    expect(outcome.responseStatus).toBe(500);
    expect(outcome.responseBody).toHaveLength(4096);
    expect(outcome.responseBody).toBe(longBody.slice(0, 4096));
  });

  it("stops reading an endless body after the cap instead of buffering it", async () => {
    let written = 0;
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain" });
      const chunk = "z".repeat(16 * 1024);
      // Bounded: at most 64 MiB, stopping as soon as the client goes away.
      const pump = (): void => {
        while (written < 4096 && !res.destroyed) {
          written += 1;
          if (!res.write(chunk)) {
            res.once("drain", pump);
            return;
          }
        }
        res.end();
      };
      res.on("close", () => {
        written = Number.MAX_SAFE_INTEGER;
      });
      pump();
    });
    const outcome = await dispatcher().send(simpleDelivery(receiver.url));
    expect(outcome).toMatchObject({ ok: true, responseStatus: 200, responseBody: "z".repeat(4096) });
  });

  it("decodes a body whose characters are cut across chunks, and drops a leading BOM", async () => {
    const bytes = Buffer.from("\uFEFFZoë 😀 done", "utf8");
    // Cut inside "ë" (2 bytes) and inside the emoji (4 bytes); each part its own chunk on the wire.
    const cuts = [0, 5, 9, 11, bytes.length];
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
      const writePart = (i: number): void => {
        if (i + 1 >= cuts.length) {
          res.end();
          return;
        }
        res.write(bytes.subarray(cuts[i], cuts[i + 1]));
        setTimeout(() => writePart(i + 1), 15);
      };
      writePart(0);
    });
    const outcome = await dispatcher().send(simpleDelivery(receiver.url));
    expect(outcome).toMatchObject({ ok: true, responseStatus: 200, responseBody: "Zoë 😀 done" });
  });

  it("never splits a character pair and never stores NUL characters", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.statusCode = 400;
      res.end("a" + "😀".repeat(3000) + "\u0000");
    });
    const outcome = await dispatcher().send(simpleDelivery(receiver.url));
    expect(outcome.responseBody.length).toBeLessThanOrEqual(4096);
    expect(outcome.responseBody).toBe("a" + "😀".repeat(2047));

    const nul = await startReceiver((_req, res) => res.end("before\u0000after"));
    expect((await dispatcher().send(simpleDelivery(nul.url))).responseBody).toBe("before\uFFFDafter");
  });

  it("gives up on a receiver that never answers, within about the time-out", async () => {
    const receiver = await startReceiver(() => {
      /* never answers */
    });
    const started = Date.now();
    const outcome = await dispatcher({ timeoutMs: 300 }).send(simpleDelivery(receiver.url));
    const elapsed = Date.now() - started;
    expect(outcome).toMatchObject({ ok: false, responseStatus: 0, responseBody: "Timed out after 300 ms" });
    expect(elapsed).toBeGreaterThanOrEqual(250);
    expect(elapsed).toBeLessThan(1500);
    expect(outcome.durationMs).toBeGreaterThanOrEqual(250);
  });

  it("counts a 2xx whose body does not complete within the time-out as a time-out", async () => {
    const receiver = await startReceiver((_req, res) => {
      res.writeHead(200, { "Content-Length": "100" });
      res.write("partial"); // and then nothing more
    });
    const started = Date.now();
    const outcome = await dispatcher({ timeoutMs: 300 }).send(simpleDelivery(receiver.url));
    expect(Date.now() - started).toBeLessThan(1500);
    expect(outcome).toMatchObject({
      ok: false,
      responseStatus: 0,
      responseBody: "Timed out after 300 ms while reading the response body (HTTP 200)",
    });
  });

  it("reports a connection destroyed by the receiver as a reset", async () => {
    const receiver = await startReceiver((req) => req.socket.destroy());
    expect(await dispatcher().send(simpleDelivery(receiver.url))).toMatchObject({ ok: false, responseStatus: 0, responseBody: "Connection reset" });
  });

  it("reports a closed port as connection refused", async () => {
    const receiver = await startReceiver((_req, res) => res.end());
    const url = receiver.url;
    await receiver.close();
    expect(await dispatcher().send(simpleDelivery(url))).toMatchObject({ ok: false, responseStatus: 0, responseBody: "Connection refused" });
  });

  it("does not follow redirects: a 302 is a failed attempt and the target receives nothing", async () => {
    const target = await startReceiver((_req, res) => res.end("should not be reached"));
    const redirecting = await startReceiver((_req, res) => {
      res.writeHead(302, { Location: target.url });
      res.end("moved");
    });
    const outcome = await dispatcher().send(simpleDelivery(redirecting.url));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 302, responseBody: "moved" });
    expect(redirecting.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
    expect(target.connections).toBe(0);
  });

  it("reports DNS failures without throwing", async () => {
    const resolveHost: HostResolver = (hostname) => Promise.reject(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" }));
    const outcome = await dispatcher({ resolveHost }).send(simpleDelivery("http://nowhere.test/hook"));
    // The delivery log says neither whether the name exists nor what the resolver said; operators get it (issue 35 item 12).
    expect(outcome).toMatchObject({ ok: false, responseStatus: 0, responseBody: TARGET_UNREACHABLE_MESSAGE, detail: "DNS lookup failed for nowhere.test (ENOTFOUND)" });

    const empty: HostResolver = () => Promise.resolve([]);
    expect(await dispatcher({ resolveHost: empty }).send(simpleDelivery("http://nowhere.test/hook"))).toMatchObject({
      responseBody: TARGET_UNREACHABLE_MESSAGE,
      detail: "DNS lookup failed for nowhere.test (ENOTFOUND)",
    });
  });

  it("bounds a DNS look-up that never answers by the same time-out", async () => {
    const resolveHost: HostResolver = () => new Promise(() => undefined);
    const started = Date.now();
    const outcome = await dispatcher({ timeoutMs: 300, resolveHost }).send(simpleDelivery("http://slow-dns.test/hook"));
    expect(outcome).toMatchObject({ ok: false, responseStatus: 0, responseBody: "Timed out after 300 ms" });
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("connects to the address it resolved itself and keeps the connection alive for the next delivery", async () => {
    const receiver = await startReceiver((_req, res) => res.end("ok"));
    const lookups: string[] = [];
    const resolveHost: HostResolver = (hostname) => {
      lookups.push(hostname);
      return Promise.resolve([{ address: "127.0.0.1", family: 4 }]);
    };
    const d = dispatcher({ resolveHost });
    const url = `http://receiver.test:${receiver.port}/hook`;
    for (let i = 0; i < 4; i += 1) {
      expect(await d.send(simpleDelivery(url))).toMatchObject({ ok: true, responseStatus: 200 });
    }
    expect(receiver.requests.map((r) => r.headers.host)).toEqual(Array(4).fill(`receiver.test:${receiver.port}`));
    // Exactly one resolution per connection: the checked answer is the connected one, there is no
    // second look-up a rebinding DNS server could answer differently.
    expect(lookups.length).toBe(receiver.connections);
    expect(lookups.every((name) => name === "receiver.test")).toBe(true);
    // Pooled keep-alive: sequential deliveries reuse connections. (undici frees a connection a tick
    // after the body ends, so a back-to-back second request may still open one more.)
    expect(receiver.connections).toBeLessThan(4);
  });

  it("sends URL credentials as HTTP Basic and drops the fragment", async () => {
    const receiver = await startReceiver((_req, res) => res.end());
    await dispatcher().send(simpleDelivery(`http://us%40er:p%3Ass@127.0.0.1:${receiver.port}/hook?a=1#frag`));
    const received = receiver.requests[0]!;
    expect(received.url).toBe("/hook?a=1");
    expect(received.headers.authorization).toBe("Basic " + Buffer.from("us@er:p:ss").toString("base64"));
  });

  it("turns unusable URLs and a closed dispatcher into outcomes, not exceptions", async () => {
    const d = dispatcher();
    expect(await d.send(simpleDelivery("not a url"))).toMatchObject({ ok: false, responseStatus: 0, responseBody: "Invalid target URL" });
    expect(await d.send(simpleDelivery("ftp://example.com/x"))).toMatchObject({ ok: false, responseStatus: 0, responseBody: "Invalid target URL" });
    const badHeader = await d.send({ url: "http://127.0.0.1:9/", headers: { "X-Bad": "line\r\nbreak" }, body: "{}" });
    expect(badHeader).toMatchObject({ ok: false, responseStatus: 0 });
    expect(badHeader.responseBody).toMatch(/^Request failed: /);
    await d.close();
    expect(await d.send(simpleDelivery("http://127.0.0.1:9/"))).toMatchObject({ ok: false, responseStatus: 0, responseBody: "Dispatcher is closed" });
  });

  it("rejects a non-positive time-out at construction", () => {
    expect(() => createDispatcher({ timeoutMs: 0, allowPrivateTargets: true })).toThrow(RangeError);
  });
});
