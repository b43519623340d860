import { describeDistributed } from "@crm/testing";
import { runCoreFlow } from "./flow";
import { startDistributed, type RunningProduct } from "./harness";

jest.setTimeout(240_000);

describeDistributed("distributed mode (a process per service, PostgreSQL, Redis, Kafka)", () => {
  let product: RunningProduct;
  beforeAll(async () => {
    product = await startDistributed();
  });
  afterAll(async () => {
    await product?.stop();
  });

  it("carries one request and one event through every tier", async () => {
    await runCoreFlow(product.baseUrl, `dist-${Date.now()}`);
  });
});
