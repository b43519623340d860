import { createHash } from "node:crypto";
import express, { type Router } from "express";
import { ok } from "@crm/contracts";
import { docsAssets } from "./docs-page";

export interface PublicDocuments {
  capabilities: object;
  /**
   * Builds the bare OpenAPI document (not enveloped). Called once, on the first request for it:
   * generating it is ~1 s of CPU and several MB that most processes never need (the start-up budget).
   */
  openapi: () => object;
  /** The interactive docs page, or undefined when not built. */
  docsHtml?: string;
}

/** Endpoints the gateway answers itself, without authentication. Bodies are fixed per process: ETag them. */
export function publicRouter(documents: PublicDocuments): Router {
  const router = express.Router();
  const capabilities = JSON.stringify(ok(documents.capabilities));
  const etag = (body: string) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
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
    return (req: express.Request, res: express.Response) => {
      const { body, tag } = document();
      res.setHeader("ETag", tag);
      res.setHeader("Cache-Control", "public, max-age=300");
      if (req.get("if-none-match") === tag) return void res.status(304).end();
      res.type(type).send(body);
    };
  };
  router.get("/capabilities", serve(capabilities, "application/json"));
  router.get("/openapi.json", serve(() => JSON.stringify(documents.openapi()), "application/json"));
  if (documents.docsHtml) {
    router.get("/docs", serve(documents.docsHtml, "text/html"));
    router.use("/docs", docsAssets());
  }
  return router;
}
