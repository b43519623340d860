// The one flow through every tier (issue 2): sign-up -> sign-in -> webhook -> client -> outbox ->
// bus -> delivery -> signed POST to a receiver -> SUCCESS in the delivery log.
// Every call goes through the typed client (@crm/client), so the client is proven on every run, and
// every answer is still checked against the served OpenAPI document.
import { createCrmClient, verifyWebhookSignature } from "@crm/client";
import { verifyInterfaceSignature, waitFor } from "@crm/testing";
import { startReceiver } from "./harness";
import { OpenApiResponseValidator } from "./openapi-validator";

/** A fetch for @crm/client that records, like ApiClient, every answer the document does not describe. */
export function validatingFetch(validator: OpenApiResponseValidator, undocumented: string[]): (request: Request) => Promise<Response> {
  return async (request) => {
    const response = await fetch(request);
    const text = await response.clone().text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    const { pathname } = new URL(request.url);
    if (pathname.startsWith("/api/v1/")) {
      undocumented.push(...validator.check(request.method, pathname, response.status, parsed, response.headers.get("content-type")));
    }
    return response;
  };
}

/** The value of a cookie the response sets (as a browser's jar would keep it), if any. */
function setCookie(response: Response, name: string): string | undefined {
  for (const line of response.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    const value = pair!.slice(eq + 1).trim();
    if (pair!.slice(0, eq).trim() === name && value !== "" && !/max-age=0/i.test(line)) return value;
  }
  return undefined;
}

export async function runCoreFlow(baseUrl: string, suffix: string): Promise<void> {
  const doc = (await (await fetch(`${baseUrl}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
  const undocumented: string[] = [];
  const fetchAndValidate = validatingFetch(new OpenApiResponseValidator(doc), undocumented);
  const anonymous = createCrmClient({ baseUrl, fetch: fetchAndValidate });

  const email = `owner-${suffix}@example.test`;
  const password = "correct-horse-battery";
  const signUp = await anonymous.POST("/api/v1/auth/sign-up", {
    body: { businessName: `Business ${suffix}`, email, password, firstName: "Ada", lastName: "Owner" },
  });
  if (signUp.response.status !== 201 || !signUp.data) throw new Error(`sign-up failed: ${signUp.response.status} ${JSON.stringify(signUp.error)}`);
  const businessId = signUp.data.data.business.id;

  const signIn = await anonymous.POST("/api/v1/auth/sign-in", { body: { email, password } });
  expect(signIn.response.status).toBe(200);
  const signedIn = signIn.data!.data;
  expect(typeof signedIn.accessToken).toBe("string");
  expect((signedIn as Record<string, unknown>).refreshToken).toBeUndefined();
  expect(setCookie(signIn.response, "refreshToken")).toBeDefined();
  const api = createCrmClient({ baseUrl, accessToken: signedIn.accessToken, fetch: fetchAndValidate });

  const receiver = await startReceiver(200);
  try {
    const hook = await api.POST("/api/v1/webhook", { body: { url: receiver.url, events: ["client.created"], description: "e2e" } });
    expect(hook.response.status).toBe(201);
    const secret: string = hook.data!.data.secret;
    expect(secret.startsWith("whsec_")).toBe(true);

    const created = await api.POST("/api/v1/client", { body: { firstName: "Grace", lastName: "Hopper", email: "grace@example.test" } });
    expect(created.response.status).toBe(201);
    const client = created.data!.data;
    expect(client).toMatchObject({ firstName: "Grace", lastName: "Hopper", email: "grace@example.test", businessId });

    const request = await waitFor(() => receiver.received[0], 30_000, 100);
    expect(request.headers["content-type"]).toMatch(/^application\/json/);
    expect(request.headers["x-service-event"]).toBe("client.created");
    expect(verifyInterfaceSignature(secret, request.rawBody, request.headers["x-service-signature"] as string)).toBe(true);
    // The partner-facing helper agrees with the independent verifier, and refuses a wrong secret.
    expect(verifyWebhookSignature(secret, request.rawBody, request.headers["x-service-signature"])).toBe(true);
    expect(verifyWebhookSignature(secret, Buffer.from(request.rawBody, "utf8"), request.headers["x-service-signature"])).toBe(true);
    expect(verifyWebhookSignature(`${secret}x`, request.rawBody, request.headers["x-service-signature"])).toBe(false);
    const payload = JSON.parse(request.rawBody);
    expect(payload).toMatchObject({ event: "client.created", businessId });
    expect(payload.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(payload.data).toMatchObject({ id: client.id, firstName: "Grace", lastName: "Hopper", email: "grace@example.test", businessId, createdAt: client.createdAt });

    const hookId = hook.data!.data.id;
    const deliveries = await waitFor(async () => {
      const res = await api.GET("/api/v1/webhook/{id}/deliveries", { params: { path: { id: hookId } } });
      return res.data?.data[0]?.status === "SUCCESS" ? res.data : undefined;
    }, 15_000);
    expect(deliveries.meta.total).toBe(1);
    expect(deliveries.data[0]).toMatchObject({ event: "client.created", status: "SUCCESS", responseStatus: 200, attempt: 1, nextRetryAt: null });
    expect(request.headers["x-service-delivery-id"]).toBe(deliveries.data[0]!.id);
    expect(undocumented).toEqual([]);
  } finally {
    await receiver.close();
  }
}
