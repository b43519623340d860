// The embedded product for suites that check every response against the OpenAPI document the
// product serves: started in beforeAll, stopped (and its data removed) in afterAll, and after each
// test no response any of its clients received may have been undocumented.
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { ApiClient } from "./api-client";
import { startEmbedded } from "./harness";
import { OpenApiResponseValidator } from "./openapi-validator";

export interface ValidatedProduct {
  /** The running product (set once beforeAll has run). */
  readonly product: Awaited<ReturnType<typeof startEmbedded>>;
  /** A new client whose responses are validated. */
  api(): ApiClient;
  /** A client signed up as the OWNER of a new business. */
  owner(): Promise<ApiClient & { businessId: string }>;
}

/** `env`: the product's settings, or a function making them when the product starts (free ports, say). */
export function validatedEmbeddedProduct(env: Record<string, string> | (() => Promise<Record<string, string>>)): ValidatedProduct {
  let product: Awaited<ReturnType<typeof startEmbedded>> | undefined;
  let validator: OpenApiResponseValidator;
  const clients: ApiClient[] = [];

  beforeAll(async () => {
    product = await startEmbedded(typeof env === "function" ? await env() : env);
    const doc = await (await fetch(`${product.baseUrl}/api/v1/openapi.json`)).json();
    validator = new OpenApiResponseValidator(doc as Record<string, unknown>);
  });

  afterAll(async () => {
    await product?.stop();
    if (product) rmSync(product.dataDir, { recursive: true, force: true });
  });

  afterEach(() => {
    const problems = clients.flatMap((c) => c.undocumented.splice(0));
    expect(problems).toEqual([]);
  });

  const running = () => {
    if (!product) throw new Error("the product is not running (did beforeAll fail?)");
    return product;
  };
  const api = () => {
    const client = new ApiClient(running().baseUrl, validator);
    clients.push(client);
    return client;
  };
  return {
    get product() {
      return running();
    },
    api,
    owner: async () => {
      const client = api();
      const { businessId } = await client.signUp(randomUUID().slice(0, 8));
      return Object.assign(client, { businessId });
    },
  };
}
