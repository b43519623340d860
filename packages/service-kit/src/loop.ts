/**
 * Work a service repeats on a timer (the retry cycle, the first-attempt poller, periodic jobs): one turn,
 * a pause, the next turn. The pause is asked for after each turn ends, so a turn's outcome can set it
 * (a poller that found a backlog comes back sooner); turns never overlap. A turn that fails is reported
 * and the loop goes on: a failed poll must never stop the polling. The timer does not keep the process
 * alive (the HTTP server does).
 */
export interface LoopOptions {
  /** One turn; a rejection goes to `onError`. */
  turn: () => Promise<void>;
  /** The pause before the next turn, asked for when a turn has ended. */
  delayMs: () => number;
  /** Pause before the first turn; 0 (default): at once, e.g. for work a previous process left. */
  firstDelayMs?: number;
  onError: (err: unknown) => void;
}

export interface Loop {
  /** No new turn starts; resolves once the turn in progress, if any, has ended. */
  stop(): Promise<void>;
}

export function startLoop(options: LoopOptions): Loop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();

  function schedule(delayMs: number): void {
    if (stopped) return;
    timer = setTimeout(() => {
      current = Promise.resolve()
        .then(options.turn)
        .catch(options.onError)
        .finally(() => schedule(options.delayMs()));
    }, delayMs);
    timer.unref();
  }

  schedule(options.firstDelayMs ?? 0);
  return {
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      await current;
    },
  };
}
