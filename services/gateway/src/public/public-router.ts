import { createHash } from "node:crypto";
import express, { type Router } from "express";
import { ok } from "@crm/contracts";
import { docsAssets } from "./docs-page";

export interface PublicDocuments {
  capabilities: object;
  /** Built once at start; the bare OpenAPI document (not enveloped). */
  openapi: object;
  /** The interactive docs page, or undefined when not built. */
  docsHtml?: string;
}

/** Endpoints the gateway answers itself, without authentication. Bodies are fixed per process: ETag them. */
export function publicRouter(documents: PublicDocuments): Router {
  const router = express.Router();
  const capabilities = JSON.stringify(ok(documents.capabilities));
  const openapi = JSON.stringify(documents.openapi);
  const etag = (body: string) => `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`;
  const serve = (body: string, type: string) => {
    const tag = etag(body);
    return (req: express.Request, res: express.Response) => {
      res.setHeader("ETag", tag);
      res.setHeader("Cache-Control", "public, max-age=300");
      if (req.get("if-none-match") === tag) return void res.status(304).end();
      res.type(type).send(body);
    };
  };
  router.get("/capabilities", serve(capabilities, "application/json"));
  router.get("/openapi.json", serve(openapi, "application/json"));
  if (documents.docsHtml) {
    router.get("/docs", serve(documents.docsHtml, "text/html"));
    router.use("/docs", docsAssets());
  }
  return router;
}
