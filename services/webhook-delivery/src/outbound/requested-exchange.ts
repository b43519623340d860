// docs/performance.md D10 turned off (UNDICI_DISPATCH=false): one webhook exchange the way undici's
// documentation makes one, through `request()` with an AbortSignal and the body read as a stream. It
// settles exactly as dispatcher.ts's Exchange does, so every outcome is the same either way.
import { TextDecoder } from "node:util";
import type { Dispatcher } from "undici";

const utf8 = new TextDecoder("utf-8");

export class RequestedExchange {
  /** Set by the whole-exchange timer: every later error is reported as this time-out. */
  private timedOut: Error | undefined;
  private readonly controller = new AbortController();

  constructor(
    private readonly maxBytes: number,
    private readonly settle: (status: number | undefined, text: string | undefined, err: unknown) => void,
  ) {}

  /** The whole-exchange time-out: aborts the request, or the reading of its body. */
  timeOut(err: Error): void {
    this.timedOut = err;
    this.controller.abort(err);
  }

  /** Sends `request` on `dispatcher`; keeps the body up to `maxBytes`, then drops the rest (and the connection). */
  async start(dispatcher: Dispatcher, request: Dispatcher.RequestOptions): Promise<void> {
    let status: number | undefined;
    try {
      const res = await dispatcher.request({ ...request, signal: this.controller.signal });
      status = res.statusCode;
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of res.body as AsyncIterable<Buffer>) {
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes >= this.maxBytes) {
          res.body.destroy();
          break;
        }
      }
      this.settle(status, utf8.decode(Buffer.concat(chunks, bytes)), undefined);
    } catch (err) {
      this.settle(status, undefined, this.timedOut ?? err);
    }
  }
}
