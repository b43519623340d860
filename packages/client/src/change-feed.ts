// The change feed (extensions §E6) as an async iterator of pages: every event of the business after
// `after`, in order, each once, following nextCursor and waiting (long polling) when caught up. Once
// a page's events are handled, keep its `cursor`; pass it as `after` when you start again.
import type { CrmClient, CrmSchemas } from "./crm-client";

export type FeedEvent = CrmSchemas["FeedEvent"];

export interface ChangeFeedOptions {
  /** A nextCursor from an earlier read; without it the feed starts at the oldest event kept. */
  after?: string;
  /** Event names or `{entity}.*`, e.g. `["client.*", "invoice.created"]`. */
  types?: readonly string[];
  /** Seconds each request waits for news when caught up (0-30, default 30). */
  waitSeconds?: number;
  /** Ends the iteration (and the request in flight). */
  signal?: AbortSignal;
}

/** Yields each non-empty page with the cursor to resume after it; ends only when `signal` aborts. */
export async function* changeFeed(client: CrmClient, options: ChangeFeedOptions = {}): AsyncGenerator<{ events: FeedEvent[]; cursor: string }> {
  let after = options.after;
  while (!options.signal?.aborted) {
    const { data, error, response } = await client.GET("/api/v1/events", {
      params: {
        query: {
          ...(after === undefined ? {} : { after }),
          ...(options.types ? { types: options.types.join(",") } : {}),
          wait: String(options.waitSeconds ?? 30),
        },
      },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (error || !data) throw new Error(`change feed: ${response.status} ${JSON.stringify(error)}`);
    after = data.meta.nextCursor;
    if (data.data.length > 0) yield { events: data.data, cursor: after };
  }
}
