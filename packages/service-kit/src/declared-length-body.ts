import { AsyncResource } from "node:async_hooks";
import type { IncomingMessage } from "node:http";

/**
 * Reads a body whose Content-Length the caller has already checked (within its limit, not compressed,
 * not chunked) straight off the stream, without body-parser's general path: `done` gets exactly that
 * many bytes, or undefined when the stream ends short, fails or closes first (the client went away
 * mid-body). `done` runs once, in the request's async scope: the stream's events run in the socket's,
 * so the request's trace span (AsyncLocalStorage) would otherwise be lost, as raw-body binds
 * body-parser's callbacks. (AsyncResource.bind would also build a deprecated-property wrapper per request.)
 * Used by every service's JSON body (bytes to parse).
 */
export function readDeclaredLengthBody(req: IncomingMessage, done: (bytes: Buffer | undefined) => void): void {
  const scope = new AsyncResource("DeclaredLengthBody");
  const length = Number(req.headers["content-length"]);
  const chunks: Buffer[] = [];
  let received = 0;
  let settled = false;
  const settle = (bytes: Buffer | undefined) => {
    if (settled) return;
    settled = true;
    req.off("data", onData);
    req.off("end", onEnd);
    req.off("error", onFail);
    req.off("close", onFail);
    scope.runInAsyncScope(done, undefined, bytes);
  };
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    received += chunk.length;
  };
  const onEnd = () => settle(received !== length ? undefined : chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
  const onFail = () => settle(undefined);
  req.on("data", onData);
  req.on("end", onEnd);
  req.on("error", onFail);
  req.on("close", onFail);
}
