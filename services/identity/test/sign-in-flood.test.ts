// Issue 35 item 11: a flood of bad sign-ins must not stall the rest of the process. Every sign-in runs
// scrypt, unknown emails included, on libuv's thread pool, which also serves DNS lookups (in the single
// process, the webhook deliveries' lookups). Password hashing is bounded (PASSWORD_HASH_CONCURRENCY
// running, PASSWORD_HASH_QUEUE waiting; beyond, 503000 with Retry-After at once), so a lookup made in
// the middle of 200 concurrent bad sign-ins still gets a thread at once.
import crypto from "node:crypto";
import { lookup } from "node:dns/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { INTERNAL_TOKEN_HEADER } from "@crm/contracts";
import { signInternalToken } from "@crm/service-kit";
import { INTERNAL_TOKEN_SECRET, waitFor } from "@crm/testing";
import { openHarness, PASSWORD, uniqueEmail, type Harness } from "./harness";

jest.setTimeout(120_000);

const FLOOD = 200;
const QUEUE = 8;

describe("a sign-in flood", () => {
  let h: Harness;
  let server: http.Server;
  let base: string;
  beforeAll(async () => {
    // Cost 14 (16 MiB, tens of ms a hash): enough for 200 hashes to hold the pool for seconds unbounded.
    h = await openHarness("pglite", { PASSWORD_HASH_COST: "14", PASSWORD_HASH_CONCURRENCY: "2", PASSWORD_HASH_QUEUE: String(QUEUE), SIGN_IN_MAX_FAILURES: "100000" });
    server = http.createServer(h.app);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    await h?.close();
  });

  const signIn = async (email: string, password: string, address: string) => {
    const res = await fetch(`${base}/api/v1/auth/sign-in`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        [INTERNAL_TOKEN_HEADER]: signInternalToken({}, INTERNAL_TOKEN_SECRET),
        "x-forwarded-for": address,
        "x-forwarded-proto": "http",
      },
      body: JSON.stringify({ email, password }),
    });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() };
  };

  it("lets DNS lookups through while 200 bad sign-ins are under way; the excess is 503000 with Retry-After; a wrong email and a wrong password answer alike", async () => {
    const email = uniqueEmail("target");
    expect((await h.pub("/api/v1/auth/sign-up").send({ businessName: "Flooded", email, password: PASSWORD })).status).toBe(201);

    // scrypt calls in flight, at most: each holds a pool thread until its callback.
    let inFlight = 0;
    let peak = 0;
    const original = crypto.scrypt;
    const scrypt = jest.spyOn(crypto, "scrypt").mockImplementation(((...args: unknown[]) => {
      const done = args.pop() as (...result: unknown[]) => void;
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      return (original as (...a: unknown[]) => void)(...args, (...result: unknown[]) => {
        inFlight -= 1;
        done(...result);
      });
    }) as typeof crypto.scrypt);

    let pending = FLOOD;
    const answers = Array.from({ length: FLOOD }, (_, i) =>
      // Half against the real user with a wrong password, half against unknown emails; each from its own address.
      signIn(i % 2 === 0 ? email : uniqueEmail("nobody"), "not the password", `198.51.100.${i % 250}`).finally(() => {
        pending -= 1;
      }),
    );
    // Once the first answers are back, the hashes the flood started are running or queued.
    await waitFor(() => pending < FLOOD, 30_000, 5);
    const started = performance.now();
    await lookup("localhost");
    const lookupMs = performance.now() - started;
    const stillPending = pending;
    const settled = await Promise.all(answers).finally(() => scrypt.mockRestore());
    // The lookup did not wait behind the flood's hashes: it came back while sign-ins were still being
    // answered, and quickly (unbounded, it queued behind every hash started before it: seconds).
    expect(lookupMs).toBeLessThan(1_000);
    expect(stillPending).toBeGreaterThan(0);

    const byStatus = new Map<number, typeof settled>();
    for (const answer of settled) byStatus.set(answer.status, [...(byStatus.get(answer.status) ?? []), answer]);
    expect([...byStatus.keys()].sort()).toEqual([401, 503]);
    // Never more hashes at once than PASSWORD_HASH_CONCURRENCY; what the queue could not hold was refused.
    expect(peak).toBe(2);
    expect(new Set(byStatus.get(503)!.map((a) => a.body))).toEqual(new Set(['{"success":false,"error":{"code":503000,"message":"Service unavailable"}}']));
    expect(byStatus.get(503)!.filter((a) => !/^[1-9]\d*$/.test(a.retryAfter ?? ""))).toEqual([]);
    // Wrong email and wrong password: one answer.
    expect(new Set(byStatus.get(401)!.map((a) => a.body))).toEqual(new Set(['{"success":false,"error":{"code":401001,"message":"Invalid credentials"}}']));
    // The flood over, the user signs in as usual.
    expect((await signIn(email, PASSWORD, "203.0.113.1")).status).toBe(200);
  });
});
