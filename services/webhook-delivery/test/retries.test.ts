// Receivers that fail in every way (interface §3, §6; decisions §6, §8), with the schedule shortened
// through the WEBHOOK_* variables: 300 ms time-out, retries after 300 ms then 600 ms, a 100 ms cycle.
import { uuidv7 } from "@crm/contracts";
import { waitFor } from "@crm/testing";
import { api, inProcessBus, preferredMode, principal, publish, recordEvent, settled, sleep, startReceiver, type Behaviour, type Receiver, setUpDelivery } from "./support/harness";

const DELAYS = [300, 600];
const TIMEOUT_MS = 300;

interface DeliveryBody {
  id: string;
  status: string;
  attempt: number;
  responseStatus: number | null;
  responseBody: string | null;
  nextRetryAt: string | null;
  updatedAt: string;
}

/** A delivery as the log showed it, and when that answer arrived (the test's clock is the service's). */
type Seen = DeliveryBody & { answeredAt: number };

/**
 * nextRetryAt = the moment the attempt was recorded + the delay. Exact while the retry was not yet due
 * when the log answered. Once it is due, the retry may already be claimed, and the log then shows that
 * attempt's lease end instead, which is later (under load the first read can come that late).
 */
function expectScheduledAfter(seen: Seen, delay: number) {
  const recordedAt = Date.parse(seen.updatedAt);
  const gap = Date.parse(seen.nextRetryAt!) - recordedAt;
  if (seen.answeredAt < recordedAt + delay) expect(gap).toBe(delay);
  else expect(gap).toBeGreaterThanOrEqual(delay);
}

describe(`retries on ${preferredMode}`, () => {
  jest.setTimeout(20_000);
  const setup = setUpDelivery(preferredMode, {
    service: { WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_DELAYS_MS: DELAYS.join(","), WEBHOOK_RETRY_INTERVAL_MS: "100" },
    receiver: false,
  });
  const bus = inProcessBus();
  const receivers: Receiver[] = [];
  afterAll(async () => {
    for (const r of receivers) await r.close();
  });

  /** A webhook of a fresh business pointing at a receiver that behaves as told, and one event for it. */
  async function deliverOne(behaviour: Receiver["behaviour"]) {
    const receiver = await startReceiver(behaviour);
    receivers.push(receiver);
    const business = uuidv7();
    const owner = api(setup.service, principal(business));
    const hook = (await owner.post("/api/v1/webhook", { url: receiver.url, events: ["client.updated"] }).expect(201)).body.data;
    await publish(bus, [recordEvent(business, "client.updated", { id: uuidv7() })]);
    const log = async (): Promise<DeliveryBody | undefined> => (await owner.get(`/api/v1/webhook/${hook.id}/deliveries`).expect(200)).body.data[0];
    const until = (predicate: (d: DeliveryBody) => boolean, timeoutMs = 10_000) =>
      waitFor(
        async (): Promise<Seen | undefined> => {
          const d = await log();
          return d && predicate(d) ? { ...d, answeredAt: Date.now() } : undefined;
        },
        timeoutMs,
        15,
      );
    return { receiver, owner, hook, log, until };
  }

  it("retries a 500 after each delay, then fails for good after three attempts", async () => {
    const { receiver, until } = await deliverOne({ kind: "status", status: 500, body: "boom" });

    const first = await until((d) => d.attempt === 1);
    expect(first).toMatchObject({ status: "RETRYING", responseStatus: 500, responseBody: "boom" });
    expectScheduledAfter(first, DELAYS[0]!);

    const second = await until((d) => d.attempt === 2);
    expect(second).toMatchObject({ status: "RETRYING", responseStatus: 500 });
    expectScheduledAfter(second, DELAYS[1]!);

    const third = await until((d) => d.attempt === 3);
    expect(third).toMatchObject({ status: "FAILED", responseStatus: 500, nextRetryAt: null });

    // The receiver saw three attempts, spaced by at least the delays, all with one delivery id.
    await settled(setup.service);
    expect(receiver.requests).toHaveLength(3);
    const [a1, a2, a3] = receiver.requests as [(typeof receiver.requests)[0], (typeof receiver.requests)[0], (typeof receiver.requests)[0]];
    expect(a2.at - a1.at).toBeGreaterThanOrEqual(DELAYS[0]! - 5);
    expect(a3.at - a2.at).toBeGreaterThanOrEqual(DELAYS[1]! - 5);
    const ids = new Set(receiver.requests.map((r) => r.headers["x-service-delivery-id"]));
    expect([...ids]).toEqual([third.id]);
    expect(new Set(receiver.requests.map((r) => r.headers["webhook-id"]))).toEqual(ids);
    // Every attempt re-sends the same bytes.
    expect(new Set(receiver.requests.map((r) => r.rawBody)).size).toBe(1);

    const history = await setup.service.deliveries.attempts(third.id);
    expect(history.map((h) => [h.attempt, h.responseStatus, h.succeeded])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 500, false],
    ]);
  });

  it("records a receiver that hangs past the time-out as status 0 with the error text", async () => {
    const { receiver, until } = await deliverOne({ kind: "hang" });
    const first = await until((d) => d.attempt === 1);
    expect(first).toMatchObject({ status: "RETRYING", responseStatus: 0, responseBody: `Timed out after ${TIMEOUT_MS} ms` });
    const last = await until((d) => d.status === "FAILED");
    expect(last).toMatchObject({ attempt: 3, responseStatus: 0, nextRetryAt: null });
    expect(receiver.requests).toHaveLength(3);
  });

  it("records a closed connection as status 0", async () => {
    const { until } = await deliverOne({ kind: "close" });
    const first = await until((d) => d.attempt === 1);
    expect(first.status).toBe("RETRYING");
    expect(first.responseStatus).toBe(0);
    expect(first.responseBody).toMatch(/\S/);
  });

  it("does not follow redirects: a 302 is a failed attempt", async () => {
    const target = await startReceiver();
    receivers.push(target);
    const { until } = await deliverOne({ kind: "redirect", location: target.url });
    const first = await until((d) => d.attempt === 1);
    expect(first).toMatchObject({ status: "RETRYING", responseStatus: 302 });
    await sleep(100);
    expect(target.requests).toHaveLength(0);
  });

  it("counts any 2xx as success and keeps the first 4,096 characters of the answer", async () => {
    const { until } = await deliverOne({ kind: "status", status: 202, body: "x".repeat(10_000) });
    const done = await until((d) => d.status === "SUCCESS");
    expect(done).toMatchObject({ attempt: 1, responseStatus: 202, nextRetryAt: null });
    expect(done.responseBody).toHaveLength(4096);
  });

  it("succeeds on a retry when the receiver recovers", async () => {
    let calls = 0;
    const { until } = await deliverOne(() => ({ kind: "status", status: ++calls === 1 ? 503 : 200 }) as Behaviour);
    const done = await until((d) => d.status === "SUCCESS");
    expect(done).toMatchObject({ attempt: 2, responseStatus: 200, nextRetryAt: null });
  });

  it("manual retry re-sends a FAILED delivery as attempt 4 on the same record; a failure leaves it FAILED", async () => {
    const { receiver, hook, owner, until } = await deliverOne({ kind: "status", status: 500 });
    const failed = await until((d) => d.status === "FAILED");
    expect(failed.attempt).toBe(3);

    const retried = await owner.post(`/api/v1/webhook/${hook.id}/deliveries/${failed.id}/retry`).expect(202);
    expect(retried.body.success).toBe(true);
    expect(retried.body.data).toMatchObject({ id: failed.id, attempt: 4, status: "FAILED", nextRetryAt: null, responseStatus: 500 });
    // No automatic retries after a failed manual one: a retry cycle claims nothing of it.
    await settled(setup.service);
    expect(receiver.requests).toHaveLength(4);
    expect(new Set(receiver.requests.map((r) => r.headers["x-service-delivery-id"]))).toEqual(new Set([failed.id]));
    expect(await until((d) => d.attempt === 4)).toMatchObject({ status: "FAILED", nextRetryAt: null });

    // Receiver fixed: the next manual retry succeeds, after which the delivery is not retryable.
    receiver.behaviour = { kind: "status", status: 200, body: "ok" };
    const ok = await owner.post(`/api/v1/webhook/${hook.id}/deliveries/${failed.id}/retry`).expect(202);
    expect(ok.body.data).toMatchObject({ id: failed.id, attempt: 5, status: "SUCCESS", responseStatus: 200, nextRetryAt: null });
    const again = await owner.post(`/api/v1/webhook/${hook.id}/deliveries/${failed.id}/retry`).expect(409);
    expect(again.body).toEqual({ success: false, error: { code: 409004, message: "Delivery is not in a retryable state" } });
    const history = await setup.service.deliveries.attempts(failed.id);
    expect(history.map((h) => [h.attempt, h.manual])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
      [5, true],
    ]);
  });

  it("answers 409004 for a RETRYING delivery", async () => {
    const { hook, owner, until } = await deliverOne({ kind: "status", status: 500 });
    const retrying = await until((d) => d.status === "RETRYING");
    const res = await owner.post(`/api/v1/webhook/${hook.id}/deliveries/${retrying.id}/retry`).expect(409);
    expect(res.body.error.code).toBe(409004);
  });
});
