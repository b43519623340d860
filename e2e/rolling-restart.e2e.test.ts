// Rolling restarts (issue 38, item 1): two replicas of every service and two gateways behind a
// round-robin balancer that follows their /readyz (balancer.ts), in distributed mode. Under a steady
// mixed load (reads of every service with a JWT and an API key, idempotent creates, a webhook on each
// create), every process is restarted one after the other (SIGTERM: drain, stop; start; ready), and:
// - no request failed: every answer is 2xx (the contract's own answers; not even a 503000);
// - no event was lost: every client created got its client.created webhook;
// - no delivery was sent twice: one delivery per client, each delivery POSTed once;
// - the balancer never met a gateway that refused: each left its rotation (/readyz 503) before it closed.
// Short by default (one round, 1 s drains; CI). In full (docs/operations.md, "Rolling restarts"):
//   ROLLING_RESTART_ROUNDS=3 ROLLING_RESTART_DRAIN_MS=5000 npx jest e2e/rolling-restart.e2e.test.ts
import { describeDistributed, startReceiver, type Receiver, waitFor } from "@crm/testing";
import { ApiClient } from "./api-client";
import { type Balancer, startBalancer } from "./balancer";
import { type RunningDistributed, startDistributed } from "./harness";
import { startSteadyLoad } from "./steady-load";

const ROUNDS = Number(process.env.ROLLING_RESTART_ROUNDS ?? 1);
const DRAIN_MS = Number(process.env.ROLLING_RESTART_DRAIN_MS ?? 1_000);

jest.setTimeout(240_000 + ROUNDS * 8 * (DRAIN_MS + 15_000));

describeDistributed("rolling restart of every replica under load (distributed mode)", () => {
  let product: RunningDistributed;
  let balancer: Balancer;
  let receiver: Receiver;
  let owner: ApiClient;
  let apiKey: string;

  beforeAll(async () => {
    receiver = await startReceiver({ kind: "status", status: 200, body: "ok" }, "/hooks");
    product = await startDistributed({ RATE_LIMIT_MAX: "1000000", OUTBOX_POLL_INTERVAL_MS: "200", SHUTDOWN_DRAIN_MS: String(DRAIN_MS) }, { replicas: 2 });
    const second = await product.startGateway();
    balancer = await startBalancer([product.baseUrl, second]);
    owner = new ApiClient(balancer.url);
    await owner.signUp(`rolling-${Date.now()}`);
    const key = await owner.call("POST", "/api/v1/api-key", { name: "rolling load", scopes: ["clients.read"] });
    expect(key.status).toBe(201);
    apiKey = key.body.data.key;
    const hook = await owner.call("POST", "/api/v1/webhook", { url: receiver.url, events: ["client.created"] });
    expect(hook.status).toBe(201);
  });

  afterAll(async () => {
    await balancer?.close();
    await product?.stop();
    await receiver?.close();
  });

  it("fails no request, loses no event and sends no delivery twice", async () => {
    const load = startSteadyLoad(balancer.url, { accessToken: owner.accessToken!, apiKey }, { everyService: true });
    const startedAt = Date.now();
    const restarts: Array<{ label: string; at: number; ms: number }> = [];
    // The processes' own warnings and errors, but the consumer's rebalancing chatter, collected as they
    // come (the harness keeps only the latest output): printed if anything failed.
    const warnings = new Set<string>();
    const collect = () => {
      for (const line of product.logs().split("\n"))
        if (/"level":(40|50|60)/.test(line) && !line.includes('"kafka') && !line.includes("rebalanc")) warnings.add(line.slice(0, 1500));
    };
    const collector = setInterval(collect, 1_000);
    try {
      await waitFor(() => load.created.length >= 2, 30_000, 20);
      for (let round = 0; round < ROUNDS; round++) {
        for (const process of product.processes) {
          const at = Date.now();
          await process.restart();
          restarts.push({ label: process.label, at, ms: Date.now() - at });
        }
      }
      // The load keeps going a moment after the last restart, on every lane.
      const lastAt = Date.now();
      await waitFor(
        () => (["jwt-read", "key-read", "create", "identity-read", "webhook-read"] as const).every((kind) => load.answers.some((a) => a.kind === kind && a.startedAt > lastAt)),
        30_000,
        50,
      );
    } finally {
      await load.stop();
      clearInterval(collector);
      collect();
    }
    const failed = load.answers.filter((a) => a.status < 200 || a.status >= 300);

    // Every client's webhook arrives (its event was published and consumed), as one delivery, POSTed once.
    const created = load.created;
    const bodies = await waitFor(
      () => {
        const all = receiver.requests.map((r) => ({ deliveryId: r.headers["x-service-delivery-id"] as string, clientId: (JSON.parse(r.rawBody).data as { id: string }).id }));
        const seen = new Set(all.map((b) => b.clientId));
        return created.every((c) => seen.has(c.id)) ? all : undefined;
      },
      90_000,
      200,
    ).catch(() => receiver.requests.map((r) => ({ deliveryId: r.headers["x-service-delivery-id"] as string, clientId: (JSON.parse(r.rawBody).data as { id: string }).id })));
    const delivered = new Set(bodies.map((b) => b.clientId));
    const lost = created.filter((c) => !delivered.has(c.id));
    const deliveriesPerClient = new Map<string, Set<string>>();
    const postsPerDelivery = new Map<string, number>();
    for (const { deliveryId, clientId } of bodies) {
      deliveriesPerClient.set(clientId, (deliveriesPerClient.get(clientId) ?? new Set()).add(deliveryId));
      postsPerDelivery.set(deliveryId, (postsPerDelivery.get(deliveryId) ?? 0) + 1);
    }
    const twice = [...postsPerDelivery.values()].filter((n) => n > 1).length + [...deliveriesPerClient.values()].filter((ids) => ids.size > 1).length;

    // The figure docs/operations.md reports.
    console.log(
      `rolling restart: ${ROUNDS} round(s) of ${product.processes.length} processes (drain ${DRAIN_MS} ms) in ${Math.round((Date.now() - startedAt) / 1000)} s; ` +
        `restart ${Math.min(...restarts.map((r) => r.ms))}-${Math.max(...restarts.map((r) => r.ms))} ms each; ` +
        `${load.answers.length} requests, ${failed.length} failed; ${created.length} clients created, ${lost.length} events lost; ` +
        `${bodies.length} webhook POSTs, ${twice} sent twice; balancer retries: ${balancer.retried.refused} refused, ${balancer.retried.reset} reset`,
    );
    if (failed.length > 0 || balancer.failures.length > 0) {
      // Which restart each failure fell in, what the balancer met, and the processes' warnings and errors.
      const during = (at: number) => restarts.find((r) => at >= r.at && at <= r.at + r.ms)?.label ?? "between restarts";
      console.log(
        JSON.stringify(
          { failed: failed.map((a) => ({ ...a, during: during(a.startedAt) })), balancer: balancer.failures.map((f) => ({ ...f, during: during(f.at) })), restarts },
          null,
          1,
        ),
        [...warnings].slice(-60).join("\n"),
      );
    }
    expect(failed).toEqual([]);
    expect(lost).toEqual([]);
    expect(twice).toBe(0);
    expect(restarts).toHaveLength(ROUNDS * 8);
    // Each gateway left the balancer's rotation on its readiness (the drain) before it stopped accepting.
    expect(balancer.retried).toEqual({ refused: 0, reset: 0 });
  });
});
