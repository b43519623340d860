// The interactive API reference at /api/v1/docs: Swagger UI's static files served from the
// swagger-ui-dist package (no CDN, works offline), pointed at /api/v1/openapi.json.
import path from "node:path";
import express, { type RequestHandler } from "express";

export const DOCS_ASSETS = ["swagger-ui.css", "swagger-ui-bundle.js", "favicon-32x32.png"] as const;

export function docsHtml(): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>CRM Platform API reference</title>
  <link rel="icon" href="/api/v1/docs/favicon-32x32.png">
  <link rel="stylesheet" href="/api/v1/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/v1/docs/swagger-ui-bundle.js"></script>
  <script src="/api/v1/docs/init.js"></script>
</body>
</html>`;
}

/** Kept out of the page itself so a strict Content-Security-Policy (no inline script) works. */
const INIT_JS = `window.ui = SwaggerUIBundle({ url: "/api/v1/openapi.json", dom_id: "#swagger-ui", deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis], layout: "BaseLayout" });`;

/** Serves the page's static assets; anything else under /docs/ falls through to 404000. */
export function docsAssets(): RequestHandler {
  const dir = path.dirname(require.resolve("swagger-ui-dist/package.json"));
  const statics = express.static(dir, { index: false, maxAge: "1d", fallthrough: true });
  const allowed = new Set<string>(DOCS_ASSETS);
  return (req, res, next) => {
    const name = req.path.replace(/^\//, "");
    if (name === "init.js") return void res.type("application/javascript").setHeader("Cache-Control", "public, max-age=300").send(INIT_JS);
    if (!allowed.has(name)) return next();
    statics(req, res, next);
  };
}
