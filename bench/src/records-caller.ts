// A business signed up for the records benchmarks, with the headers each way in needs: a JWT through
// the gateway (either build), the internal token the gateway would send (straight to crm-records),
// and the peer's business id. Shared by bench:records and bench:hop-floor.
import { permission, type Principal } from "@crm/contracts";
import { signInternalToken } from "@crm/service-kit";

export type Way = "gateway" | "gatewayB" | "direct" | "peer";

export interface Caller {
  businessId: string;
  headers: Record<Way, Record<string, string>>;
}

export async function signUp(baseUrl: string, name: string, internalTokenSecret: string): Promise<Caller> {
  const email = `bench-${name}-${Date.now()}@example.test`;
  const res = await fetch(`${baseUrl}/api/v1/auth/sign-up`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ businessName: `Bench ${name}`, email, password: "correct-horse-battery" }),
  });
  if (res.status !== 201) throw new Error(`sign-up failed: ${res.status} ${await res.text()}`);
  const { data } = (await res.json()) as { data: { accessToken: string; user: { id: string }; business: { id: string } } };
  const principal: Principal = {
    businessId: data.business.id,
    authType: "jwt",
    userId: data.user.id,
    apiKeyId: null,
    sessionId: null,
    jti: null,
    permissions: [permission("clients", "read"), permission("clients", "create")],
  };
  const json = { "content-type": "application/json" };
  return {
    businessId: data.business.id,
    headers: {
      gateway: { ...json, authorization: `Bearer ${data.accessToken}` },
      gatewayB: { ...json, authorization: `Bearer ${data.accessToken}` },
      // What the gateway would send, signed once for the whole run (a day's lifetime).
      direct: { ...json, "x-internal-token": signInternalToken({ principal, requestId: "bench" }, internalTokenSecret, 86_400) },
      peer: { ...json, "x-business-id": data.business.id },
    },
  };
}
