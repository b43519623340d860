import { z } from "./zod";

/**
 * Who is calling, as resolved once by the gateway and carried to services in the internal token.
 * Services scope every query by `businessId` from here, never from the request.
 */
export const principalSchema = z.object({
  businessId: z.string(),
  authType: z.enum(["jwt", "apiKey"]),
  userId: z.string().nullable(),
  apiKeyId: z.string().nullable(),
  /** The session (refresh family) of a JWT caller; needed by logout. */
  sessionId: z.string().nullable(),
  /** The access token id of a JWT caller; needed by logout. */
  jti: z.string().nullable(),
  permissions: z.array(z.string()),
  /**
   * Who the caller is to a person reading the audit log (extensions §E7): the user's email or the API
   * key's name, as the gateway's cached state of them says. Absent from gateways before §E7.
   */
  label: z.string().nullable().optional(),
});
export type Principal = z.infer<typeof principalSchema>;

/** Header that carries the internal token from the gateway to a service. */
export const INTERNAL_TOKEN_HEADER = "x-internal-token";
