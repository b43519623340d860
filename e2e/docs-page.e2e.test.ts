// The interactive API reference, opened in a real browser (Debian's Chromium through playwright-core):
// it renders the served OpenAPI document and lists the endpoints. A screenshot is kept in artifacts/.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser } from "playwright-core";
import { ROOT, startEmbedded } from "./harness";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const describeWithBrowser: jest.Describe = existsSync(CHROMIUM) ? describe : describe.skip;
if (!existsSync(CHROMIUM)) console.warn(`docs page test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium)`);

jest.setTimeout(120_000);

describeWithBrowser("GET /api/v1/docs in headless Chromium", () => {
  let product: Awaited<ReturnType<typeof startEmbedded>>;
  let browser: Browser;

  beforeAll(async () => {
    // The product starts while the browser does; kept for afterAll whatever the browser's outcome.
    const starting = startEmbedded();
    starting.catch(() => undefined); // awaited below: an early failure is not an unhandled one
    try {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
      });
    } finally {
      product = await starting;
    }
  });
  afterAll(async () => {
    await browser?.close();
    await product?.stop();
    if (product) rmSync(product.dataDir, { recursive: true, force: true });
  });

  it("renders the reference with the endpoints of every context, from local assets only", async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1600 } });
    const external: string[] = [];
    page.on("request", (req) => {
      if (!req.url().startsWith(product.baseUrl)) external.push(req.url());
    });
    await page.goto(`${product.baseUrl}/api/v1/docs`);
    await page.waitForSelector(".opblock", { timeout: 30_000 });
    const paths = await page.$$eval(".opblock-summary-path", (nodes) => nodes.map((n) => n.getAttribute("data-path") ?? n.textContent ?? ""));
    for (const expected of ["/api/v1/auth/sign-in", "/api/v1/client", "/api/v1/invoice", "/api/v1/webhook/{id}/deliveries", "/api/v1/api-key"]) {
      expect(paths.map((p) => p.replace(/\u200b/g, ""))).toContain(expected);
    }
    expect(await page.title()).toBe("CRM Platform API reference");
    expect(external).toEqual([]);
    const dir = path.join(ROOT, "artifacts");
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, "docs-page.png") });
  });
});
