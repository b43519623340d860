// Request and response schemas of the identity context (interface §4, §5; decisions §4, §5, §8).
// The identity service validates with these; its routes (routes/identity.routes.ts) document them.
import { z } from "./zod";
import { allPermissions, isPermission, roles } from "./permissions";

export const PASSWORD_MIN_LENGTH = 10;
/** scrypt input is bounded so a huge "password" cannot be used to burn CPU. */
export const PASSWORD_MAX_LENGTH = 1024;
export const NAME_MAX_LENGTH = 200;
export const EMAIL_MAX_LENGTH = 254;

const email = z.email({ message: "Invalid email address" }).max(EMAIL_MAX_LENGTH).openapi({ example: "ada@example.com" });
const password = z
  .string()
  .min(PASSWORD_MIN_LENGTH, { message: `Password must have at least ${PASSWORD_MIN_LENGTH} characters` })
  .max(PASSWORD_MAX_LENGTH)
  .openapi({ format: "password", example: "correct horse battery" });
const personName = z.string().max(NAME_MAX_LENGTH);
const role = z.enum(roles);
const timestamp = z.string().openapi({ format: "date-time" });

export const signUpSchema = z
  .object({
    businessName: z.string().trim().min(1).max(NAME_MAX_LENGTH).openapi({ example: "Acme Ltd" }),
    email,
    password,
    firstName: personName.optional(),
    lastName: personName.optional(),
  })
  .strict()
  .openapi("SignUp", { example: { businessName: "Acme Ltd", email: "ada@example.com", password: "correct horse battery", firstName: "Ada", lastName: "Lovelace" } });
export type SignUp = z.infer<typeof signUpSchema>;

/** Sign-in checks the password, not its policy: any non-empty string may be tried. */
export const signInSchema = z
  .object({ email: z.string().min(1).max(EMAIL_MAX_LENGTH), password: z.string().min(1).max(PASSWORD_MAX_LENGTH) })
  .strict()
  .openapi("SignIn", { example: { email: "ada@example.com", password: "correct horse battery" } });
export type SignIn = z.infer<typeof signInSchema>;

export const businessSchema = z.object({ id: z.string(), name: z.string(), createdAt: timestamp }).openapi("Business");
export type BusinessView = z.infer<typeof businessSchema>;

export const userSchema = z
  .object({
    id: z.string(),
    businessId: z.string().nullable(),
    email: z.string(),
    firstName: z.string().nullable(),
    lastName: z.string().nullable(),
    role,
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .openapi("User");
export type UserView = z.infer<typeof userSchema>;

export const accessTokenDataSchema = z.object({ accessToken: z.string().openapi({ description: "JWT; send as `Authorization: Bearer <token>`" }) }).openapi("AccessToken");

export const sessionDataSchema = z.object({ accessToken: z.string(), user: userSchema, business: businessSchema }).openapi("SignedIn");

export const meSchema = z
  .object({
    user: userSchema.nullable().openapi({ description: "null for an API key" }),
    business: businessSchema,
    permissions: z.array(z.string()),
    authType: z.enum(["jwt", "apiKey"]),
  })
  .openapi("Me");
export type MeView = z.infer<typeof meSchema>;

export const userCreateSchema = z
  .object({
    email,
    password,
    firstName: personName.optional(),
    lastName: personName.optional(),
    role: role.optional().openapi({ description: "Default MEMBER" }),
  })
  .strict()
  .openapi("UserCreate", { example: { email: "grace@example.com", password: "a-long-password", firstName: "Grace", lastName: "Hopper", role: "MEMBER" } });
export type UserCreate = z.infer<typeof userCreateSchema>;

export const userUpdateSchema = z
  .object({
    email: email.optional(),
    password: password.optional(),
    currentPassword: z
      .string()
      .min(1)
      .max(PASSWORD_MAX_LENGTH)
      .optional()
      .openapi({ format: "password", description: "The caller's password now: required to change one's own password or email" }),
    firstName: personName.nullable().optional(),
    lastName: personName.nullable().optional(),
    role: role.optional(),
  })
  .strict()
  .openapi("UserUpdate", { example: { role: "ADMIN", lastName: "Hopper" } });
export type UserUpdate = z.infer<typeof userUpdateSchema>;

const scope = z.string().refine(isPermission, { message: "Unknown permission" });

/** Extensions §E3.2: entries of a key's address allow-list, and its own rate limit's longest window. */
export const API_KEY_ALLOWED_IPS_MAX = 50;
export const API_KEY_RATE_LIMIT_WINDOW_MAX_S = 3_600;
/** The highest `rateLimit.max` a key may have unless identity's RATE_LIMIT_KEY_MAX says otherwise. */
export const RATE_LIMIT_KEY_MAX_DEFAULT = 1_000;

const allowedIps = z
  .array(z.string().max(64))
  .min(1, { message: "List at least one address or block, or send null for any address" })
  .max(API_KEY_ALLOWED_IPS_MAX)
  .nullable()
  .openapi({
    description: `At most ${API_KEY_ALLOWED_IPS_MAX} IPv4/IPv6 addresses or CIDR blocks the key may be used from (else 403 403001); null = any address. Stored normalised: a bare address as /32 or /128, IPv4-mapped IPv6 as IPv4, host bits cleared`,
    example: ["203.0.113.0/24", "2001:db8::/32"],
  });

const rateLimitSchema = z
  .object({
    max: z.number().int().min(1).openapi({ description: "Requests per window, 1 to RATE_LIMIT_KEY_MAX (capabilities.limits.apiKeyRateLimitMax)" }),
    windowSeconds: z.number().int().min(1).max(API_KEY_RATE_LIMIT_WINDOW_MAX_S),
  })
  .strict()
  .openapi("ApiKeyRateLimit", { example: { max: 500, windowSeconds: 60 } });

const rateLimit = rateLimitSchema.nullable().openapi({ description: "The key's own rate limit, instead of the global one; null = the global limit" });

export const apiKeyCreateSchema = z
  .object({
    name: z.string().trim().min(1).max(NAME_MAX_LENGTH).openapi({ example: "Billing sync" }),
    scopes: z
      .array(scope)
      .max(allPermissions.length * 2)
      .optional()
      .openapi({
        description: "Permissions the key may use; empty or omitted = all permissions of its creator, as they are at request time",
        items: { type: "string", enum: [...allPermissions] },
      }),
    expiresAt: z.iso
      .datetime({ offset: true, message: "Expected an ISO 8601 date-time" })
      .nullable()
      .optional()
      .openapi({ description: "Must be in the future; null or omitted = never expires" }),
    allowedIps: allowedIps.optional(),
    rateLimit: rateLimit.optional(),
  })
  .strict()
  .openapi("ApiKeyCreate", { example: { name: "Billing sync", scopes: ["clients.read", "invoices.create"], expiresAt: "2027-01-01T00:00:00Z" } });
export type ApiKeyCreate = z.infer<typeof apiKeyCreateSchema>;

export const apiKeyUpdateSchema = z
  .object({
    name: z.string().trim().min(1).max(NAME_MAX_LENGTH).optional(),
    allowedIps: allowedIps.optional(),
    rateLimit: rateLimit.optional(),
  })
  .strict()
  .openapi("ApiKeyUpdate", { example: { allowedIps: ["203.0.113.0/24"], rateLimit: { max: 500, windowSeconds: 60 } } });
export type ApiKeyUpdate = z.infer<typeof apiKeyUpdateSchema>;

export const apiKeySchema = z
  .object({
    id: z.string(),
    businessId: z.string(),
    name: z.string(),
    keyPrefix: z.string().openapi({ example: "svc_AbC12dEf" }),
    scopes: z.array(z.string()),
    expiresAt: timestamp.nullable(),
    isActive: z.boolean().openapi({ description: "false once revoked" }),
    revokedAt: timestamp.nullable(),
    createdByUserId: z.string().nullable(),
    createdAt: timestamp,
    lastUsedAt: timestamp.nullable().openapi({
      description:
        "Last time the key authenticated a request; null if never. Gateways report use in batches, so it trails the truth by at most API_KEY_USAGE_FLUSH_MS (15 s by default)",
    }),
    lastUsedIp: z.string().nullable().openapi({ description: "The client address of that request (reported with lastUsedAt); null if never used" }),
    allowedIps: z.array(z.string()).nullable(),
    rateLimit: rateLimitSchema.nullable(),
  })
  .openapi("ApiKey");
export type ApiKeyView = z.infer<typeof apiKeySchema>;

export const apiKeyWithSecretSchema = apiKeySchema
  .extend({ key: z.string().openapi({ description: "The full key (svc_ + 40 base62 characters); shown only in this response" }) })
  .openapi("ApiKeyWithSecret");
export type ApiKeyWithSecretView = z.infer<typeof apiKeyWithSecretSchema>;

export const apiKeyRevokeSchema = z
  .object({ id: z.string() })
  .strict()
  .openapi("ApiKeyRevoke", { example: { id: "01939d5e-8c2a-7b3e-9f1a-2c4d6e8f0a1b" } });

/** The longest overlap a roll may give the old key: 7 days (extensions §E3). */
export const API_KEY_ROLL_MAX_OVERLAP_S = 604_800;
export const API_KEY_ROLL_DEFAULT_OVERLAP_S = 86_400;

export const apiKeyRollSchema = z
  .object({
    expiresInSeconds: z
      .number()
      .int()
      .min(0)
      .max(API_KEY_ROLL_MAX_OVERLAP_S)
      .optional()
      .openapi({
        description: `Seconds the old key keeps working (0-${API_KEY_ROLL_MAX_OVERLAP_S}, default ${API_KEY_ROLL_DEFAULT_OVERLAP_S}); 0 ends it at once. An old key due to expire sooner keeps its expiry.`,
        example: 3600,
      }),
  })
  .strict()
  .openapi("ApiKeyRoll", { example: { expiresInSeconds: 3600 } });
export type ApiKeyRoll = z.infer<typeof apiKeyRollSchema>;
