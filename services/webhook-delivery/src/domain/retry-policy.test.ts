import { decideAfterAttempt, maxAutomaticAttempts } from "./retry-policy";

const now = new Date("2024-06-01T12:00:00.000Z");
const at = (ms: number): Date => new Date(now.getTime() + ms);

describe("decideAfterAttempt with the default schedule (60 s, 300 s)", () => {
  it.each([
    { attempt: 1, succeeded: true, manual: false, status: "SUCCESS", nextRetryAt: null },
    { attempt: 2, succeeded: true, manual: false, status: "SUCCESS", nextRetryAt: null },
    { attempt: 3, succeeded: true, manual: false, status: "SUCCESS", nextRetryAt: null },
    { attempt: 1, succeeded: false, manual: false, status: "RETRYING", nextRetryAt: at(60_000) },
    { attempt: 2, succeeded: false, manual: false, status: "RETRYING", nextRetryAt: at(300_000) },
    { attempt: 3, succeeded: false, manual: false, status: "FAILED", nextRetryAt: null },
    // Defensive: an automatic attempt beyond the schedule can only fail permanently.
    { attempt: 4, succeeded: false, manual: false, status: "FAILED", nextRetryAt: null },
    // decisions §8: a manual retry after three failures is attempt 4 and never schedules anything.
    { attempt: 4, succeeded: false, manual: true, status: "FAILED", nextRetryAt: null },
    { attempt: 4, succeeded: true, manual: true, status: "SUCCESS", nextRetryAt: null },
    { attempt: 5, succeeded: false, manual: true, status: "FAILED", nextRetryAt: null },
    { attempt: 1, succeeded: false, manual: true, status: "FAILED", nextRetryAt: null },
  ])("attempt $attempt, succeeded $succeeded, manual $manual → $status", ({ attempt, succeeded, manual, status, nextRetryAt }) => {
    expect(decideAfterAttempt({ attempt, succeeded, manual, now })).toEqual({ status, nextRetryAt });
  });

  it("allows three automatic attempts in all", () => {
    expect(maxAutomaticAttempts()).toBe(3);
  });
});

describe("decideAfterAttempt with other schedules (WEBHOOK_RETRY_DELAYS_MS)", () => {
  it.each([
    { delaysMs: [], attempt: 1, status: "FAILED", nextRetryAt: null },
    { delaysMs: [100], attempt: 1, status: "RETRYING", nextRetryAt: at(100) },
    { delaysMs: [100], attempt: 2, status: "FAILED", nextRetryAt: null },
    { delaysMs: [100, 200, 400], attempt: 1, status: "RETRYING", nextRetryAt: at(100) },
    { delaysMs: [100, 200, 400], attempt: 2, status: "RETRYING", nextRetryAt: at(200) },
    { delaysMs: [100, 200, 400], attempt: 3, status: "RETRYING", nextRetryAt: at(400) },
    { delaysMs: [100, 200, 400], attempt: 4, status: "FAILED", nextRetryAt: null },
    { delaysMs: [0], attempt: 1, status: "RETRYING", nextRetryAt: at(0) },
  ])("delays $delaysMs, failed attempt $attempt → $status", ({ delaysMs, attempt, status, nextRetryAt }) => {
    expect(decideAfterAttempt({ attempt, succeeded: false, now, delaysMs })).toEqual({ status, nextRetryAt });
  });

  it("maxAutomaticAttempts is delays.length + 1", () => {
    expect(maxAutomaticAttempts([])).toBe(1);
    expect(maxAutomaticAttempts([1, 2, 3])).toBe(4);
  });

  it("does not mutate or depend on the caller's Date", () => {
    const clock = new Date(now);
    const decision = decideAfterAttempt({ attempt: 1, succeeded: false, now: clock });
    clock.setTime(0);
    expect(decision.nextRetryAt).toEqual(at(60_000));
  });
});

describe("decideAfterAttempt rejects caller bugs", () => {
  it.each([0, -1, 1.5, Number.NaN])("attempt %p", (attempt) => {
    expect(() => decideAfterAttempt({ attempt, succeeded: false, now })).toThrow(RangeError);
  });

  it("a negative or non-finite delay", () => {
    expect(() => decideAfterAttempt({ attempt: 1, succeeded: false, now, delaysMs: [-1] })).toThrow(RangeError);
    expect(() => decideAfterAttempt({ attempt: 1, succeeded: false, now, delaysMs: [Number.POSITIVE_INFINITY] })).toThrow(RangeError);
  });
});
