// A webhook receiver that checks every signature: WEBHOOK_SECRET=whsec_... node docs/examples/receiver.js
// (PORT, default 4000). It verifies X-Service-Signature over the raw body bytes, as docs/api.md explains.
const http = require("node:http");
const { createHash, createHmac, timingSafeEqual } = require("node:crypto");

const SECRET = process.env.WEBHOOK_SECRET; // whsec_... from the webhook's create (or rotate) response
if (!SECRET) throw new Error("set WEBHOOK_SECRET to the webhook's secret");
const PORT = Number(process.env.PORT ?? 4000);

function verify(rawBody, header) {
  if (!header?.startsWith("sha256=")) return false;
  const key = createHash("sha256").update(SECRET).digest("hex");
  const expected = Buffer.from(createHmac("sha256", key).update(rawBody).digest("hex"));
  const given = Buffer.from(header.slice("sha256=".length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

http
  .createServer((req, res) => {
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const raw = Buffer.concat(chunks); // checked exactly as received, never re-serialised
      if (!verify(raw, req.headers["x-service-signature"])) return res.writeHead(401).end();
      const event = JSON.parse(raw.toString("utf8"));
      console.log("verified", req.headers["x-service-delivery-id"], event.event, JSON.stringify(event.data));
      res.writeHead(204).end(); // a 2xx within 10 s, or the delivery is retried
    });
  })
  .listen(PORT, "127.0.0.1", () => console.log(`receiver listening on http://127.0.0.1:${PORT}`));
