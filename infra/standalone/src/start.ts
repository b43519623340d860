import { runProcess } from "@crm/service-kit";
import { startStandalone } from "./standalone";

runProcess(async () => {
  const product = await startStandalone(process.env);
  const url = product.url;
  // Say what is bound, not only where to call: on every interface the loopback URL alone would hide
  // that other machines can reach it too.
  const wildcard = /^(0\.0\.0\.0|\[::\]):/.test(product.boundTo);
  const listening = wildcard ? `every interface (${product.boundTo}); from this machine: ${url}/api/v1` : `${url}/api/v1`;
  process.stdout.write(
    [
      "",
      `CRM platform API listening on ${listening}`,
      `  OpenAPI:      ${url}/api/v1/openapi.json    docs: ${url}/api/v1/docs`,
      `  Sign up:      curl -s -X POST ${url}/api/v1/auth/sign-up -H 'content-type: application/json' \\`,
      `                  -d '{"businessName":"Acme","email":"you@example.com","password":"a-long-password"}'`,
      `  Data:         ${process.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : `embedded PostgreSQL under ${process.env.DATA_DIR ?? "./.data"}`}`,
      "",
    ].join("\n") + "\n",
  );
  return product;
});
