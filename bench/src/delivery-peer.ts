// The hand-written peer of webhook delivery: a bare loop of undici POSTs with the same signing work
// per request as the product (two HMAC-SHA256: X-Service-Signature and the Standard Webhooks
// signature), the same pooled keep-alive agent shape, and a fixed number in flight. No database, no
// bus, no retries: the ceiling of "sign and POST" on this machine.
import { createHash, createHmac, randomBytes, randomUUID } from "node:crypto";
import { Agent, request } from "undici";

export interface PeerRun {
  sent: number;
  failures: number;
  seconds: number;
}

/** Sends `total` signed POSTs to `url`, `concurrency` in flight, and times first send to last answer. */
export async function runBareLoop(options: { url: string; total: number; concurrency: number; connectionsPerOrigin: number; body: (i: number) => string }): Promise<PeerRun> {
  const secret = `whsec_${randomBytes(24).toString("base64")}`;
  const serviceKey = createHash("sha256").update(secret).digest("hex");
  const standardKey = Buffer.from(secret.slice("whsec_".length), "base64");
  const agent = new Agent({ connections: options.connectionsPerOrigin });
  let next = 0;
  let failures = 0;
  const started = performance.now();
  try {
    await Promise.all(
      Array.from({ length: options.concurrency }, async () => {
        while (next < options.total) {
          const i = next++;
          const body = options.body(i);
          const id = randomUUID();
          const ts = Math.floor(Date.now() / 1000);
          const res = await request(options.url, {
            dispatcher: agent,
            method: "POST",
            headers: {
              "content-type": "application/json",
              "user-agent": "bench-peer/1",
              "x-service-signature": `sha256=${createHmac("sha256", serviceKey).update(body).digest("hex")}`,
              "x-service-event": "client.created",
              "x-service-delivery-id": id,
              "webhook-id": id,
              "webhook-timestamp": String(ts),
              "webhook-signature": `v1,${createHmac("sha256", standardKey).update(`${id}.${ts}.${body}`).digest("base64")}`,
            },
            body,
          });
          await res.body.text();
          if (res.statusCode < 200 || res.statusCode > 299) failures++;
        }
      }),
    );
  } finally {
    await agent.close();
  }
  return { sent: options.total, failures, seconds: (performance.now() - started) / 1000 };
}
