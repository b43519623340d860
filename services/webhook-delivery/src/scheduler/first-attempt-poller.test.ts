import { createLogger } from "@crm/logger";
import { waitFor } from "@crm/testing";
import { FirstAttemptPoller, type FirstAttemptPollerOptions } from "./first-attempt-poller";

const logger = createLogger({ service: "test", level: "silent" });

/** Runs `body` while a poller (busy checks every 1 ms) polls `scheduler`, and stops it after. */
async function whilePolling(scheduler: FirstAttemptPollerOptions["scheduler"], intervalMs: number, body: () => Promise<void>): Promise<void> {
  const poller = new FirstAttemptPoller({ scheduler, intervalMs, busyCheckMs: 1, logger });
  poller.start();
  try {
    await body();
  } finally {
    await poller.stop();
  }
}

describe("FirstAttemptPoller", () => {
  it("keeps claiming while a backlog lasts, only when there is room, then goes back to its interval", async () => {
    const claims = [5, 5, 0, 7];
    const polls: number[] = [];
    let room = true;
    const scheduler = {
      waitingForRoom: false,
      leftOutBusinesses: false,
      get canPull() {
        return room;
      },
      pullFirstAttempts: async () => {
        polls.push(Date.now());
        const claimed = claims.shift() ?? 0;
        // Claiming fills the process; the test frees room later.
        if (claimed > 0) room = false;
        return claimed;
      },
    };
    // The interval is far longer than the test: every poll after the first (at start) is a busy one.
    await whilePolling(scheduler, 60_000, async () => {
      await waitFor(() => polls.length >= 1, 45_000, 5);
      // No room: no query, however long.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(polls).toHaveLength(1);
      room = true;
      await waitFor(() => polls.length >= 2, 45_000, 5);
      expect(room).toBe(false);
      room = true;
      // The third poll has room and finds nothing: back to the 60 s interval, so no fourth poll.
      await waitFor(() => polls.length >= 3, 45_000, 5);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(polls).toHaveLength(3);
    });
  });

  it("stays on a business it had to leave out for want of room, and takes its next batch as soon as there is room", async () => {
    // Each poll's answer: how many it claimed, and whether it left the business out (this process
    // already holds all it may of it).
    const answers = [
      { claimed: 40, leftOut: false },
      { claimed: 0, leftOut: true },
      { claimed: 10, leftOut: false },
      { claimed: 0, leftOut: false },
    ];
    const polls: number[] = [];
    let roomForLeftOut = false;
    let leftOut = false;
    const scheduler = {
      canPull: true,
      get waitingForRoom() {
        return leftOut && !roomForLeftOut;
      },
      get leftOutBusinesses() {
        return leftOut;
      },
      pullFirstAttempts: async () => {
        polls.push(Date.now());
        const answer = answers.shift() ?? { claimed: 0, leftOut: false };
        leftOut = answer.leftOut;
        roomForLeftOut = false;
        return answer.claimed;
      },
    };
    await whilePolling(scheduler, 60_000, async () => {
      // The full claim, then the poll that has to leave the business out: still busy, not back to 60 s.
      await waitFor(() => polls.length >= 2, 45_000, 5);
      // No room for that business yet: no query, however long.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(polls).toHaveLength(2);
      roomForLeftOut = true;
      // Room again: the next batch at once, then a poll that finds nothing and leaves nothing out.
      await waitFor(() => polls.length >= 4, 45_000, 5);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(polls).toHaveLength(4);
    });
  });

  it("still looks at other businesses once per interval while it waits for room for one", async () => {
    const polls: number[] = [];
    const scheduler = {
      canPull: true,
      waitingForRoom: true,
      leftOutBusinesses: true,
      pullFirstAttempts: async () => {
        polls.push(Date.now());
        return 0;
      },
    };
    await whilePolling(scheduler, 40, async () => {
      await waitFor(() => polls.length >= 4, 45_000, 5);
      // Once per interval (40 ms), not once per busy check (1 ms).
      for (let i = 1; i < polls.length; i++) expect(polls[i]! - polls[i - 1]!).toBeGreaterThanOrEqual(35);
    });
  });

  it("keeps taking a backlog as fast as before while another business waits for room", async () => {
    // Business A is held at its bound the whole time (its receiver hangs); business B's backlog is
    // claimed batch after batch, each as soon as there is room, not once per interval.
    const claims = [10, 10, 10, 0];
    const polls: number[] = [];
    const scheduler = {
      canPull: true,
      waitingForRoom: true,
      leftOutBusinesses: true,
      pullFirstAttempts: async () => {
        polls.push(Date.now());
        return claims.shift() ?? 0;
      },
    };
    await whilePolling(scheduler, 60_000, async () => {
      await waitFor(() => polls.length >= 4, 45_000, 5);
      // Then only A is left out and nothing was claimed: no fifth query within the interval.
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(polls).toHaveLength(4);
    });
  });
});
