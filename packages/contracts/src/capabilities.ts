// `GET /api/v1/capabilities` reports settings that services other than the gateway enforce. Each
// owning service answers its part at INTERNAL_CAPABILITIES_PATH (from the values it runs with), and
// the gateway composes them: in distributed mode nothing is declared twice, so nothing can disagree.
import { z } from "./zod";

/** Service-to-service, behind the internal token: a service's part of the public capabilities. */
export const INTERNAL_CAPABILITIES_PATH = "/internal/capabilities";

/** Identity's part: token lifetimes and whether sign-up is open. */
export const identityCapabilitiesSchema = z.object({
  accessTokenTtlS: z.number().int(),
  refreshTokenTtlS: z.number().int(),
  signUpOpen: z.boolean(),
});
export type IdentityCapabilities = z.infer<typeof identityCapabilitiesSchema>;

/** webhook-delivery's part: the time-out and retry schedule of deliveries. */
export const webhookCapabilitiesSchema = z.object({
  webhookTimeoutMs: z.number().int(),
  webhookRetryDelaysMs: z.array(z.number().int()),
  webhookRetryIntervalMs: z.number().int(),
  webhookRetryBatchSize: z.number().int(),
});
export type WebhookCapabilities = z.infer<typeof webhookCapabilitiesSchema>;
