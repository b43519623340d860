// `GET /api/v1/capabilities` reports settings that services other than the gateway enforce. Each
// owning service answers its part at INTERNAL_CAPABILITIES_PATH (from the values it runs with), and
// the gateway composes them: in distributed mode nothing is declared twice, so nothing can disagree.
import { RATE_LIMIT_KEY_MAX_DEFAULT } from "./identity";
import { z } from "./zod";

/** Service-to-service, behind the internal token: a service's part of the public capabilities. */
export const INTERNAL_CAPABILITIES_PATH = "/internal/capabilities";

/** Identity's part: token lifetimes, whether sign-up is open, the highest per-key rate limit. */
export const identityCapabilitiesSchema = z.object({
  accessTokenTtlS: z.number().int(),
  refreshTokenTtlS: z.number().int(),
  signUpOpen: z.boolean(),
  /** Optional while an identity from before extensions §E3.2 may answer: the default is what it would say. */
  apiKeyRateLimitMax: z.number().int().default(RATE_LIMIT_KEY_MAX_DEFAULT),
});
export type IdentityCapabilities = z.infer<typeof identityCapabilitiesSchema>;
/** What an identity answers (of any release since the part existed). */
export type IdentityCapabilitiesAnswer = z.input<typeof identityCapabilitiesSchema>;

/** webhook-delivery's part: the time-out and retry schedule of deliveries. */
export const webhookCapabilitiesSchema = z.object({
  webhookTimeoutMs: z.number().int(),
  webhookRetryDelaysMs: z.array(z.number().int()),
  webhookRetryIntervalMs: z.number().int(),
  webhookRetryBatchSize: z.number().int(),
});
export type WebhookCapabilities = z.infer<typeof webhookCapabilitiesSchema>;
