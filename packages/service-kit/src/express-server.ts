import http from "node:http";
import type { Express } from "express";

/**
 * An HTTP server for an Express app whose requests and responses are born with Express's prototypes.
 *
 * Express gives every request and response its own prototype (`Object.setPrototypeOf` in
 * `app.handle`). Changing an object's prototype after it was built gives it a new hidden class, so
 * every later property access on it, in Node's HTTP and stream code as much as in Express's, meets
 * two shapes of the same object and takes V8's slower polymorphic paths (docs/performance.md D1).
 *
 * Node builds them from the classes the server is given, so this gives it subclasses of its own
 * request and response classes that carry Express's methods and accessors, and makes them the app's
 * `request` and `response`: Express's swap then finds the prototype it wants already in place and
 * changes nothing. An app whose prototypes are not built on Node's (not Express's) is served as it is.
 */
export function expressServer(app: Express, options: ServingOptions = {}): http.Server {
  return expressServing(app, options).server;
}

export interface ServingOptions {
  /** False: Node's own classes, Express swapping the prototypes per request (docs/performance.md D1, off). */
  prototypesAtBirth?: boolean;
}

/** The classes an HTTP server builds its requests and responses from. */
export interface HttpMessageClasses {
  IncomingMessage: typeof http.IncomingMessage;
  ServerResponse: typeof http.ServerResponse;
}

/**
 * `expressServer`, and the classes its server builds requests and responses from, so that a caller in
 * the same process can build a request the app sees exactly as it sees one off the wire (lifecycle's
 * in-process handler).
 */
export function expressServing(app: Express, options: ServingOptions = {}): { server: http.Server; classes: HttpMessageClasses } {
  const request = options.prototypesAtBirth === false ? undefined : bornWith(http.IncomingMessage, app.request);
  const response = options.prototypesAtBirth === false ? undefined : bornWith(http.ServerResponse, app.response);
  if (!request || !response) return { server: http.createServer(app), classes: { IncomingMessage: http.IncomingMessage, ServerResponse: http.ServerResponse } };
  app.request = request.prototype as Express["request"];
  app.response = response.prototype as Express["response"];
  const classes = { IncomingMessage: request, ServerResponse: response };
  return { server: http.createServer(classes, app), classes };
}

/**
 * A subclass of `base` whose prototype holds every property `proto` adds on its way down to
 * `base.prototype` (the nearest definition of each wins, as a lookup would find it), or undefined
 * when `proto` is not built on `base.prototype`.
 */
// biome-ignore lint/suspicious/noExplicitAny: a mixin's base must take `...any[]` (TS2545).
function bornWith<C extends new (...args: any[]) => object>(base: C, proto: object): C | undefined {
  const layers: object[] = [];
  for (let p: object | null = proto; p !== base.prototype; p = Object.getPrototypeOf(p)) {
    if (p === null) return undefined;
    layers.push(p);
  }
  const subclass = class extends base {};
  // Farthest first, so a nearer definition overwrites a farther one.
  for (const layer of layers.reverse()) Object.defineProperties(subclass.prototype, Object.getOwnPropertyDescriptors(layer));
  return subclass;
}
