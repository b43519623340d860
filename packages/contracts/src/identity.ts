// Request and response schemas of the identity context (interface §4, §5; decisions §4, §5, §8).
// The identity service validates with these, and the gateway's OpenAPI document is built from them.
import type { OpenAPIRegistry, RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { ErrorCode } from "@crm/errors";
import { z } from "./zod";
import { dataEnvelope, listEnvelope, paginationQuerySchema } from "./envelope";
import { errorResponses, jsonContent } from "./openapi-responses";
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
  .openapi("SignUp");
export type SignUp = z.infer<typeof signUpSchema>;

/** Sign-in checks the password, not its policy: any non-empty string may be tried. */
export const signInSchema = z
  .object({ email: z.string().min(1).max(EMAIL_MAX_LENGTH), password: z.string().min(1).max(PASSWORD_MAX_LENGTH) })
  .strict()
  .openapi("SignIn");
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
  .openapi("UserCreate");
export type UserCreate = z.infer<typeof userCreateSchema>;

export const userUpdateSchema = z
  .object({
    email: email.optional(),
    password: password.optional(),
    firstName: personName.nullable().optional(),
    lastName: personName.nullable().optional(),
    role: role.optional(),
  })
  .strict()
  .openapi("UserUpdate");
export type UserUpdate = z.infer<typeof userUpdateSchema>;

const scope = z.string().refine(isPermission, { message: "Unknown permission" });

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
  })
  .strict()
  .openapi("ApiKeyCreate");
export type ApiKeyCreate = z.infer<typeof apiKeyCreateSchema>;

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
  })
  .openapi("ApiKey");
export type ApiKeyView = z.infer<typeof apiKeySchema>;

export const apiKeyWithSecretSchema = apiKeySchema
  .extend({ key: z.string().openapi({ description: "The full key (svc_ + 40 base62 characters); shown only in this response" }) })
  .openapi("ApiKeyWithSecret");
export type ApiKeyWithSecretView = z.infer<typeof apiKeyWithSecretSchema>;

export const apiKeyRevokeSchema = z.object({ id: z.string() }).strict().openapi("ApiKeyRevoke");

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
  .openapi("ApiKeyRoll");
export type ApiKeyRoll = z.infer<typeof apiKeyRollSchema>;

const idParams = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });

const PUBLIC_ERRORS: ErrorCode[] = [400001, 400002, 403000, 413000, 415000, 429000, 500000];

const refreshCookieHeader = {
  "Set-Cookie": {
    description: "refreshToken=<opaque>; HttpOnly; Path=/api/v1/auth; SameSite=Lax; Max-Age=<REFRESH_TOKEN_TTL_S>; Secure (unless plain HTTP on loopback)",
    schema: { type: "string" as const },
  },
};

/** Registers every endpoint the identity service serves. */
export function registerIdentityOpenApi(registry: OpenAPIRegistry): void {
  const route = (tag: string, config: Omit<RouteConfig, "tags">) => registry.registerPath({ tags: [tag], ...config });
  const publicRoute = (config: Omit<RouteConfig, "tags" | "security">) => route("Auth", { security: [], ...config });
  const oneUser = dataEnvelope(userSchema);
  const oneKey = dataEnvelope(apiKeySchema);
  const REVOKE_RETRY =
    "503000 when the revocation could not be published to every gateway (the key may already show as revoked): retry; every revocation, also of a revoked key, publishes it again.";

  publicRoute({
    method: "post",
    path: "/api/v1/auth/sign-up",
    summary: "Create a business and its OWNER user, and sign in (when ALLOW_SIGN_UP)",
    request: { body: { required: true, ...jsonContent(signUpSchema) } },
    responses: {
      201: { description: "Signed up and signed in", headers: refreshCookieHeader, ...jsonContent(dataEnvelope(sessionDataSchema)) },
      ...errorResponses([409001, 503000], [...PUBLIC_ERRORS, 403000]),
    },
  });
  publicRoute({
    method: "post",
    path: "/api/v1/auth/sign-in",
    summary: "Sign in: access token in the body, refresh token in an HttpOnly cookie",
    description: "Repeated failures for one email from one address lock that pair for a while (429000 with Retry-After).",
    request: { body: { required: true, ...jsonContent(signInSchema) } },
    responses: {
      200: { description: "Signed in", headers: refreshCookieHeader, ...jsonContent(dataEnvelope(sessionDataSchema)) },
      ...errorResponses([401001, 401015, 503000], PUBLIC_ERRORS),
    },
  });
  publicRoute({
    method: "post",
    path: "/api/v1/auth/token/refresh",
    summary: "Rotate the refresh cookie and get a new access token",
    description: "A refresh token that was already used once revokes the whole session (401013).",
    request: {
      cookies: z.object({
        refreshToken: z
          .string()
          .optional()
          .openapi({ param: { name: "refreshToken", in: "cookie" } }),
      }),
    },
    responses: {
      200: { description: "New access token; new refresh cookie", headers: refreshCookieHeader, ...jsonContent(dataEnvelope(accessTokenDataSchema)) },
      ...errorResponses([401012, 401013, 503000], PUBLIC_ERRORS),
    },
  });
  route("Auth", {
    method: "post",
    path: "/api/v1/auth/logout",
    summary: "End the session: the access token and the session's refresh token stop working; the cookie is cleared",
    responses: { 204: { description: "Signed out; no body" }, ...errorResponses([503000]) },
  });
  route("Auth", {
    method: "get",
    path: "/api/v1/auth/me",
    summary: "The caller: user (null for an API key), business, effective permissions, authType",
    responses: { 200: { description: "OK", ...jsonContent(dataEnvelope(meSchema)) }, ...errorResponses([]) },
  });

  route("Users", {
    method: "get",
    path: "/api/v1/user",
    summary: "List the users of the caller's business, newest first (permission users.read)",
    request: { query: paginationQuerySchema },
    responses: { 200: { description: "OK", ...jsonContent(listEnvelope(userSchema)) }, ...errorResponses([400001]) },
  });
  route("Users", {
    method: "post",
    path: "/api/v1/user",
    summary: "Add a user to the caller's business; role defaults to MEMBER (permission users.create)",
    request: { body: { required: true, ...jsonContent(userCreateSchema) } },
    responses: { 201: { description: "Created", ...jsonContent(oneUser) }, ...errorResponses([400001, 400002, 409001, 413000, 415000, 503000]) },
  });
  route("Users", {
    method: "get",
    path: "/api/v1/user/{id}",
    summary: "Get a user (permission users.read)",
    request: { params: idParams },
    responses: { 200: { description: "OK", ...jsonContent(oneUser) }, ...errorResponses([404001]) },
  });
  for (const method of ["patch", "put"] as const) {
    route("Users", {
      method,
      path: "/api/v1/user/{id}",
      summary: "Update any of email, password, firstName, lastName, role; a role change applies to the user's tokens and keys at once (permission users.update)",
      description:
        "The caller must hold every permission of the user's current role and of the role it assigns; another user's password or email can be changed only with an access token, never an API key (else 401014).",
      request: { params: idParams, body: { required: true, ...jsonContent(userUpdateSchema) } },
      responses: { 200: { description: "The updated user", ...jsonContent(oneUser) }, ...errorResponses([400001, 400002, 404001, 409001, 413000, 415000, 503000]) },
    });
  }
  route("Users", {
    method: "delete",
    path: "/api/v1/user/{id}",
    summary: "Delete a user: their sessions end and the API keys they created are revoked (permission users.delete)",
    request: { params: idParams },
    responses: { 200: { description: "The user as it was", ...jsonContent(oneUser) }, ...errorResponses([400001, 404001, 503000]) },
  });

  route("API keys", {
    method: "post",
    path: "/api/v1/api-key",
    summary: "Create an API key (JWT only; permission apiKeys.create); the key is shown only here",
    security: [{ bearerAuth: [] }],
    request: { body: { required: true, ...jsonContent(apiKeyCreateSchema) } },
    responses: { 201: { description: "Created", ...jsonContent(dataEnvelope(apiKeyWithSecretSchema)) }, ...errorResponses([400001, 400002, 413000, 415000, 503000]) },
  });
  route("API keys", {
    method: "get",
    path: "/api/v1/api-key",
    summary: "List API keys, newest first, without the key (permission apiKeys.read)",
    request: { query: paginationQuerySchema },
    responses: { 200: { description: "OK", ...jsonContent(listEnvelope(apiKeySchema)) }, ...errorResponses([400001]) },
  });
  route("API keys", {
    method: "get",
    path: "/api/v1/api-key/{id}",
    summary: "Get an API key, without the key (permission apiKeys.read)",
    request: { params: idParams },
    responses: { 200: { description: "OK", ...jsonContent(oneKey) }, ...errorResponses([404001]) },
  });
  route("API keys", {
    method: "delete",
    path: "/api/v1/api-key",
    summary: "Revoke the API key named in the body; revoking twice is fine (permission apiKeys.delete)",
    description: REVOKE_RETRY,
    request: { body: { required: true, ...jsonContent(apiKeyRevokeSchema) } },
    responses: { 200: { description: "The key, isActive false", ...jsonContent(oneKey) }, ...errorResponses([400001, 400002, 404001, 413000, 415000, 503000]) },
  });
  route("API keys", {
    method: "delete",
    path: "/api/v1/api-key/{id}",
    summary: "Revoke an API key; revoking twice is fine (permission apiKeys.delete)",
    description: REVOKE_RETRY,
    request: { params: idParams },
    responses: { 200: { description: "The key, isActive false", ...jsonContent(oneKey) }, ...errorResponses([404001, 503000]) },
  });
  route("API keys", {
    method: "post",
    path: "/api/v1/api-key/{id}/roll",
    summary: "Roll an API key: a new key with the same name, scopes and expiresAt; the old one keeps working for an overlap (JWT only; permission apiKeys.create)",
    description:
      "The new key is shown only in this response. The old key's expiresAt becomes now + expiresInSeconds (or stays, if sooner); from then on every gateway answers it 401020. " +
      "The new key acts for the user who rolled it, like a key that user created. A revoked or expired key cannot be rolled (409005). " +
      "503000 when the old key's new expiry could not be published to every gateway: retry (a retry of an expired key publishes it again before answering 409005).",
    security: [{ bearerAuth: [] }],
    request: { params: idParams, body: { required: false, ...jsonContent(apiKeyRollSchema) } },
    responses: {
      201: { description: "The new key, with its secret", ...jsonContent(dataEnvelope(apiKeyWithSecretSchema)) },
      ...errorResponses([400001, 400002, 404001, 409005, 413000, 415000, 503000]),
    },
  });
}
