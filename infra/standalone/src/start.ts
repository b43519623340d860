import { runProcess } from "@crm/service-kit";
import { startStandalone } from "./standalone";

runProcess(async () => {
  const product = await startStandalone(process.env);
  const url = product.url;
  process.stdout.write(
    [
      "",
      `CRM platform API listening on ${url}/api/v1`,
      `  OpenAPI:      ${url}/api/v1/openapi.json    docs: ${url}/api/v1/docs`,
      `  Sign up:      curl -s -X POST ${url}/api/v1/auth/sign-up -H 'content-type: application/json' \\`,
      `                  -d '{"businessName":"Acme","email":"you@example.com","password":"a-long-password"}'`,
      `  Data:         ${process.env.DATABASE_URL ? "PostgreSQL (DATABASE_URL)" : `embedded PostgreSQL under ${process.env.DATA_DIR ?? "./.data"}`}`,
      "",
    ].join("\n") + "\n",
  );
  return product;
});
