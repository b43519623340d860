// The one flow through every tier (issue 2): sign-up -> sign-in -> webhook -> client -> outbox ->
// bus -> delivery -> signed POST to a receiver -> SUCCESS in the delivery log.
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { waitFor } from "@crm/testing";
import { ApiClient } from "./api-client";
import { startReceiver } from "./harness";
import { OpenApiResponseValidator } from "./openapi-validator";

/** Interface §6, re-implemented here independently of the product's signer. */
export function verifyInterfaceSignature(secret: string, rawBody: string, header: string | undefined): boolean {
  if (!header?.startsWith("sha256=")) return false;
  const key = createHash("sha256").update(secret).digest("hex");
  const expected = Buffer.from(createHmac("sha256", key).update(rawBody).digest("hex"));
  const given = Buffer.from(header.slice("sha256=".length));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export async function runCoreFlow(baseUrl: string, suffix: string): Promise<void> {
  const doc = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
  const api = new ApiClient(baseUrl, new OpenApiResponseValidator(doc));
  const { email, password, businessId } = await api.signUp(suffix);

  const signIn = await api.call("POST", "/api/v1/auth/sign-in", { email, password });
  expect(signIn.status).toBe(200);
  expect(typeof signIn.body.data.accessToken).toBe("string");
  expect(signIn.body.data.refreshToken).toBeUndefined();
  expect(api.cookie("refreshToken")).toBeDefined();
  api.accessToken = signIn.body.data.accessToken;

  const receiver = await startReceiver(200);
  try {
    const hook = await api.call("POST", "/api/v1/webhook", { url: receiver.url, events: ["client.created"], description: "e2e" });
    expect(hook.status).toBe(201);
    const secret: string = hook.body.data.secret;
    expect(secret.startsWith("whsec_")).toBe(true);

    const created = await api.call("POST", "/api/v1/client", { firstName: "Grace", lastName: "Hopper", email: "grace@example.test" });
    expect(created.status).toBe(201);
    const client = created.body.data;
    expect(client).toMatchObject({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", businessId });

    const request = await waitFor(() => receiver.received[0], 30_000, 100);
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    expect(request.headers["x-service-event"]).toBe("client.created");
    expect(verifyInterfaceSignature(secret, request.rawBody, request.headers["x-service-signature"] as string)).toBe(true);
    const payload = JSON.parse(request.rawBody);
    expect(payload).toMatchObject({ event: "client.created", businessId });
    expect(payload.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(payload.data).toMatchObject({ id: client.id, firstName: "Grace", lastName: "Hopper", email: "grace@example.test", businessId, createdAt: client.createdAt });

    const deliveries = await waitFor(async () => {
      const res = await api.call("GET", `/api/v1/webhook/${hook.body.data.id}/deliveries`);
      return res.body?.data?.[0]?.status === "SUCCESS" ? res : undefined;
    }, 15_000);
    expect(deliveries.body.meta.total).toBe(1);
    expect(deliveries.body.data[0]).toMatchObject({ event: "client.created", status: "SUCCESS", responseStatus: 200, attempt: 1, nextRetryAt: null });
    expect(request.headers["x-service-delivery-id"]).toBe(deliveries.body.data[0].id);
    expect(api.undocumented).toEqual([]);
  } finally {
    await receiver.close();
  }
}
