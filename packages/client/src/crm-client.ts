// The typed HTTP client: openapi-fetch over the types openapi-typescript generated from the
// product's OpenAPI document, so every path, parameter, body and response is checked at compile time.
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "./generated/schema";

/** Every operation of the API, keyed by path (`/api/v1/...`) and method. */
export type CrmPaths = paths;
/** The document's named schemas (e.g. `ErrorEnvelope`). */
export type CrmSchemas = components["schemas"];
/** A client whose GET/POST/PUT/PATCH/DELETE accept only documented paths, params and bodies. */
export type CrmClient = Client<paths, "application/json">;

export interface CrmClientOptions {
  /** Origin of the gateway, e.g. `https://crm.example.com`; paths carry `/api/v1` themselves. */
  baseUrl: string;
  /** JWT from sign-in, sent as `Authorization: Bearer`; a function is asked on every request (token refresh). */
  accessToken?: string | (() => string | undefined | Promise<string | undefined>);
  /** API key (`svc_...`), sent as `X-Api-Key`. Use either this or `accessToken`. */
  apiKey?: string;
  /** Replaces the global fetch (tests, proxies, instrumentation). Receives a fully built Request. */
  fetch?: (request: Request) => Promise<Response>;
  /** Headers sent with every request (e.g. a fixed `X-Request-Id` prefix is up to you). */
  headers?: Record<string, string>;
}

export function createCrmClient(options: CrmClientOptions): CrmClient {
  if (options.accessToken !== undefined && options.apiKey !== undefined) {
    // The gateway would pick one; make the caller say which instead of guessing.
    throw new TypeError("createCrmClient: pass either accessToken or apiKey, not both");
  }
  const client = createClient<paths, "application/json">({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: { accept: "application/json", ...options.headers },
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  client.use(credentials(options));
  return client;
}

/** Adds the caller's credentials unless the request already names its own. */
function credentials({ accessToken, apiKey }: CrmClientOptions): Middleware {
  return {
    async onRequest({ request }) {
      if (request.headers.has("authorization") || request.headers.has("x-api-key")) return undefined;
      if (apiKey !== undefined) {
        request.headers.set("x-api-key", apiKey);
        return request;
      }
      const token = typeof accessToken === "function" ? await accessToken() : accessToken;
      if (token !== undefined) request.headers.set("authorization", `Bearer ${token}`);
      return request;
    },
  };
}
