import { createHash } from "node:crypto";
import express, { type Router } from "express";
import { buildEventTypes, expressPath, gatewayRoutes, ok } from "@crm/contracts";
import { mountRoute } from "@crm/service-kit";
import { docsAssets } from "./docs-page";

export interface PublicDocuments {
  /** The capabilities document, or where to get the current one (it is composed from the services). */
  capabilities: object | (() => Promise<object>);
  /**
   * Builds the bare OpenAPI document (not enveloped). Called once, on the first request for it:
   * generating it is ~1 s of CPU and several MB that most processes never need (the start-up budget).
   */
  openapi: () => object;
  /** The interactive docs page, or undefined when not built. */
  docsHtml?: string;
}

/** Endpoints the gateway answers itself, without authentication. Each body is built once: ETag it. */
export function publicRouter(documents: PublicDocuments): Router {
  const router = express.Router();
  const etag = (body: string) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  const send = (req: express.Request, res: express.Response, built: { body: string; tag: string }, type: string) => {
    res.setHeader("ETag", built.tag);
    res.setHeader("Cache-Control", "public, max-age=300");
    if (req.get("if-none-match") === built.tag) return void res.status(304).end();
    res.type(type).send(built.body);
  };
  const serve = (body: string | (() => string), type: string) => {
    let built: { body: string; tag: string } | undefined;
    const document = () => {
      if (!built) {
        const text = typeof body === "string" ? body : body();
        built = { body: text, tag: etag(text) };
      }
      return built;
    };
    if (typeof body === "string") document();
    return (req: express.Request, res: express.Response) => send(req, res, document(), type);
  };
  const { capabilities } = documents;
  if (typeof capabilities === "function") {
    // Rebuilt only when the source hands out another document.
    let built: { source: object; body: string; tag: string } | undefined;
    const document = (source: object) => {
      if (built?.source === source) return built;
      const body = JSON.stringify(ok(source));
      return (built = { source, body, tag: etag(body) });
    };
    mountRoute(router, gatewayRoutes.capabilities, async (req, res) => send(req, res, document(await capabilities()), "application/json"));
  } else {
    mountRoute(router, gatewayRoutes.capabilities, serve(JSON.stringify(ok(capabilities)), "application/json"));
  }
  mountRoute(
    router,
    gatewayRoutes.openApi,
    serve(() => JSON.stringify(documents.openapi()), "application/json"),
  );
  // The event catalogue with a JSON Schema per event (extensions §E1.6): fixed per release, built on first use.
  mountRoute(
    router,
    gatewayRoutes.eventTypes,
    serve(() => JSON.stringify(ok(buildEventTypes())), "application/json"),
  );
  if (documents.docsHtml) {
    mountRoute(router, gatewayRoutes.docsPage, serve(documents.docsHtml, "text/html"));
    // The assets (gatewayRoutes.docsAsset) by name under the page's path: docsAssets reads the name from the path.
    router.use(expressPath(gatewayRoutes.docsPage.path), docsAssets());
  }
  return router;
}
