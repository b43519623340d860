import { createLogger } from "@crm/logger";
import { waitFor } from "@crm/testing";
import { FirstAttemptPoller } from "./first-attempt-poller";

const logger = createLogger({ service: "test", level: "silent" });

describe("FirstAttemptPoller", () => {
  it("keeps claiming while a backlog lasts, only when there is room, then goes back to its interval", async () => {
    const claims = [5, 5, 0, 7];
    const polls: number[] = [];
    let room = true;
    const executor = {
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
    const poller = new FirstAttemptPoller({ executor, intervalMs: 60_000, busyCheckMs: 1, logger });
    poller.start();
    try {
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
    } finally {
      await poller.stop();
    }
  });
});
