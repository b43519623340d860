// One PostgreSQL connection per process that LISTENs on a channel, for work that must be woken by
// another process's commit (NOTIFY is delivered on commit) without polling. A lost connection is
// opened again after a second; `onReconnect` is then called, since what was notified meanwhile is unknown.
import pg from "pg";

export interface NotificationListenerOptions {
  url: string;
  /** A plain identifier (it is written into LISTEN as it is). */
  channel: string;
  onNotify(payload: string): void;
  /** After every (re)connection: catch up on what may have been missed. */
  onReconnect(): void;
  warn(err: unknown, message: string): void;
}

const RECONNECT_MS = 1_000;

export function listenForNotifications(options: NotificationListenerOptions): { close(): Promise<void> } {
  if (!/^[a-z_][a-z0-9_]*$/.test(options.channel)) throw new Error(`not a plain channel name: ${options.channel}`);
  let client: pg.Client | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;

  const retry = () => {
    client = undefined;
    if (closed || timer) return;
    timer = setTimeout(() => {
      timer = undefined;
      void connect();
    }, RECONNECT_MS);
    timer.unref();
  };
  const connect = async () => {
    const next = new pg.Client({ connectionString: options.url, connectionTimeoutMillis: 5_000 });
    next.on("notification", (message) => {
      if (message.channel === options.channel) options.onNotify(message.payload ?? "");
    });
    next.on("error", (err) => {
      options.warn(err, `notification listener on ${options.channel} lost its connection; reconnecting`);
      void next.end().catch(() => undefined);
      retry();
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${options.channel}`);
      if (closed) return void next.end().catch(() => undefined);
      client = next;
      options.onReconnect();
    } catch (err) {
      options.warn(err, `notification listener on ${options.channel} could not connect; retrying`);
      void next.end().catch(() => undefined);
      retry();
    }
  };
  void connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(timer);
      await client?.end().catch(() => undefined);
    },
  };
}
