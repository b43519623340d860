// The footprint benchmark's peer: a bare Express 5 process answering one JSON list, the smallest
// server the product's processes could be. Plain JavaScript, run with `node` like the compiled product.
const express = require("express");

const rows = Array.from({ length: 20 }, (_, i) => ({ id: `client-${i}`, firstName: "Grace", lastName: `Hopper ${i}`, email: `grace${i}@example.test` }));
const app = express();
app.get("/healthz", (_req, res) => res.json({ status: "ok" }));
app.get("/api/v1/client", (_req, res) => res.json({ success: true, data: rows, meta: { total: rows.length } }));
const server = app.listen(Number(process.env.PORT), "127.0.0.1");
process.on("SIGTERM", () => server.close(() => process.exit(0)));
