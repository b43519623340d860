// The identity service's routes (interface §4, §5; decisions §4, §5, §8; extensions §E3).
import { dataEnvelope, listEnvelope, paginationQuerySchema } from "../envelope";
import {
  accessTokenDataSchema,
  apiKeyCreateSchema,
  apiKeyRevokeSchema,
  apiKeyRollSchema,
  apiKeySchema,
  apiKeyUpdateSchema,
  apiKeyWithSecretSchema,
  meSchema,
  sessionDataSchema,
  signInSchema,
  signUpSchema,
  userCreateSchema,
  userSchema,
  userUpdateSchema,
} from "../identity";
import { jsonContent } from "../openapi-responses";
import { z } from "../zod";
import { defineRoute, type Route } from "./route";

const service = "identity";
const idParams = z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) });
const oneUser = () => dataEnvelope(userSchema);
const oneKey = () => dataEnvelope(apiKeySchema);

const refreshCookieHeader = {
  "Set-Cookie": {
    description: "refreshToken=<opaque>; HttpOnly; Path=/api/v1/auth; SameSite=Lax; Max-Age=<REFRESH_TOKEN_TTL_S>; Secure (unless plain HTTP on loopback)",
    schema: { type: "string" as const },
  },
};

const REVOKE_RETRY =
  "503000 when the revocation could not be published to every gateway (the key may already show as revoked): retry; every revocation, also of a revoked key, publishes it again.";

/** PATCH and PUT of a user mean the same (decisions §4). */
const userUpdate = {
  service,
  path: "/user/{id}",
  permission: "users.update",
  // Extensions §E10: every signed-in user may change their own name, email and password here.
  openToSelf: true,
  errors: [400001, 400002, 401001, 404001, 409001, 413000, 415000, 429000, 503000],
  body: { schema: userUpdateSchema, required: true },
  docs: () => ({
    tags: ["Users"],
    summary:
      "Update any of email, password, firstName, lastName, role; a role change applies to the user's tokens and keys at once (permission users.update, or one's own user with an access token)",
    description:
      "Any signed-in user may change their own email, password, firstName and lastName (access token, no permission needed); their role, and any other user, need users.update. " +
      "The caller must hold every permission of the user's current role and of the role it assigns. " +
      "Setting a password or an email needs an access token, never an API key (else 401014). " +
      "Changing one's own password or email needs currentPassword (missing: 400001; wrong: 401001; repeated failures lock like sign-in: 429000 with Retry-After) and ends every other session of the user; " +
      "an administrator changing another user's password ends all of that user's sessions.",
    request: { params: idParams },
    responses: { 200: { description: "The updated user", ...jsonContent(oneUser()) } },
  }),
} satisfies Omit<Route, "method">;

export const identityRoutes = {
  signUp: defineRoute({
    method: "POST",
    path: "/auth/sign-up",
    service,
    public: true,
    errors: [409001, 503000],
    body: { schema: signUpSchema, required: true },
    docs: () => ({
      tags: ["Auth"],
      summary: "Create a business and its OWNER user, and sign in (when ALLOW_SIGN_UP)",
      responses: { 201: { description: "Signed up and signed in", headers: refreshCookieHeader, ...jsonContent(dataEnvelope(sessionDataSchema)) } },
    }),
  }),
  signIn: defineRoute({
    method: "POST",
    path: "/auth/sign-in",
    service,
    public: true,
    errors: [401001, 401015, 503000],
    body: { schema: signInSchema, required: true },
    docs: () => ({
      tags: ["Auth"],
      summary: "Sign in: access token in the body, refresh token in an HttpOnly cookie",
      description: "Repeated failures for one email from one address lock that pair for a while (429000 with Retry-After).",
      responses: { 200: { description: "Signed in", headers: refreshCookieHeader, ...jsonContent(dataEnvelope(sessionDataSchema)) } },
    }),
  }),
  refreshToken: defineRoute({
    method: "POST",
    path: "/auth/token/refresh",
    service,
    public: true,
    errors: [401012, 401013, 503000],
    docs: () => ({
      tags: ["Auth"],
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
      responses: { 200: { description: "New access token; new refresh cookie", headers: refreshCookieHeader, ...jsonContent(dataEnvelope(accessTokenDataSchema)) } },
    }),
  }),
  logout: defineRoute({
    method: "POST",
    path: "/auth/logout",
    service,
    errors: [503000],
    docs: () => ({
      tags: ["Auth"],
      summary: "End the session: the access token and the session's refresh token stop working; the cookie is cleared",
      responses: { 204: { description: "Signed out; no body" } },
    }),
  }),
  me: defineRoute({
    method: "GET",
    path: "/auth/me",
    service,
    errors: [],
    docs: () => ({
      tags: ["Auth"],
      summary: "The caller: user (null for an API key), business, effective permissions, authType",
      responses: { 200: { description: "OK", ...jsonContent(dataEnvelope(meSchema)) } },
    }),
  }),

  listUsers: defineRoute({
    method: "GET",
    path: "/user",
    service,
    permission: "users.read",
    errors: [400001],
    docs: () => ({
      tags: ["Users"],
      summary: "List the users of the caller's business, newest first (permission users.read)",
      request: { query: paginationQuerySchema },
      responses: { 200: { description: "OK", ...jsonContent(listEnvelope(userSchema)) } },
    }),
  }),
  createUser: defineRoute({
    method: "POST",
    path: "/user",
    service,
    permission: "users.create",
    // A new user always gets an email and a password, which only a signed-in user may set (extensions §E10).
    jwtOnly: true,
    errors: [400001, 400002, 409001, 413000, 415000, 503000],
    body: { schema: userCreateSchema, required: true },
    docs: () => ({
      tags: ["Users"],
      summary: "Add a user to the caller's business; role defaults to MEMBER (JWT only; permission users.create)",
      responses: { 201: { description: "Created", ...jsonContent(oneUser()) } },
    }),
  }),
  getUser: defineRoute({
    method: "GET",
    path: "/user/{id}",
    service,
    permission: "users.read",
    errors: [404001],
    docs: () => ({
      tags: ["Users"],
      summary: "Get a user (permission users.read)",
      request: { params: idParams },
      responses: { 200: { description: "OK", ...jsonContent(oneUser()) } },
    }),
  }),
  patchUser: defineRoute({ method: "PATCH", ...userUpdate }),
  putUser: defineRoute({ method: "PUT", ...userUpdate }),
  deleteUser: defineRoute({
    method: "DELETE",
    path: "/user/{id}",
    service,
    permission: "users.delete",
    errors: [400001, 404001, 503000],
    docs: () => ({
      tags: ["Users"],
      summary: "Delete a user: their sessions end and the API keys they created are revoked (permission users.delete)",
      request: { params: idParams },
      responses: { 200: { description: "The user as it was", ...jsonContent(oneUser()) } },
    }),
  }),

  createApiKey: defineRoute({
    method: "POST",
    path: "/api-key",
    service,
    permission: "apiKeys.create",
    jwtOnly: true,
    errors: [400001, 400002, 413000, 415000, 503000],
    body: { schema: apiKeyCreateSchema, required: true },
    docs: () => ({
      tags: ["API keys"],
      summary: "Create an API key (JWT only; permission apiKeys.create); the key is shown only here",
      responses: { 201: { description: "Created", ...jsonContent(dataEnvelope(apiKeyWithSecretSchema)) } },
    }),
  }),
  listApiKeys: defineRoute({
    method: "GET",
    path: "/api-key",
    service,
    permission: "apiKeys.read",
    errors: [400001],
    docs: () => ({
      tags: ["API keys"],
      summary: "List API keys, newest first, without the key (permission apiKeys.read)",
      request: { query: paginationQuerySchema },
      responses: { 200: { description: "OK", ...jsonContent(listEnvelope(apiKeySchema)) } },
    }),
  }),
  getApiKey: defineRoute({
    method: "GET",
    path: "/api-key/{id}",
    service,
    permission: "apiKeys.read",
    errors: [404001],
    docs: () => ({
      tags: ["API keys"],
      summary: "Get an API key, without the key (permission apiKeys.read)",
      request: { params: idParams },
      responses: { 200: { description: "OK", ...jsonContent(oneKey()) } },
    }),
  }),
  updateApiKey: defineRoute({
    method: "PATCH",
    path: "/api-key/{id}",
    service,
    permission: "apiKeys.create",
    jwtOnly: true,
    errors: [400001, 400002, 404001, 413000, 415000, 503000],
    body: { schema: apiKeyUpdateSchema, required: true },
    docs: () => ({
      tags: ["API keys"],
      summary: "Change an API key's name, address allow-list or rate limit (JWT only; permission apiKeys.create)",
      description:
        "Only name, allowedIps and rateLimit may change; any other field is 400001. The change is published to every gateway before the answer, so the next request is decided by it. " +
        "503000 when it could not be published: retry (the change is made; a retry publishes it again).",
      request: { params: idParams },
      responses: { 200: { description: "The key, changed", ...jsonContent(oneKey()) } },
    }),
  }),
  revokeApiKeyByBody: defineRoute({
    method: "DELETE",
    path: "/api-key",
    service,
    permission: "apiKeys.delete",
    errors: [400001, 400002, 404001, 413000, 415000, 503000],
    body: { schema: apiKeyRevokeSchema, required: true },
    docs: () => ({
      tags: ["API keys"],
      summary: "Revoke the API key named in the body; revoking twice is fine (permission apiKeys.delete)",
      description: REVOKE_RETRY,
      responses: { 200: { description: "The key, isActive false", ...jsonContent(oneKey()) } },
    }),
  }),
  revokeApiKey: defineRoute({
    method: "DELETE",
    path: "/api-key/{id}",
    service,
    permission: "apiKeys.delete",
    errors: [404001, 503000],
    docs: () => ({
      tags: ["API keys"],
      summary: "Revoke an API key; revoking twice is fine (permission apiKeys.delete)",
      description: REVOKE_RETRY,
      request: { params: idParams },
      responses: { 200: { description: "The key, isActive false", ...jsonContent(oneKey()) } },
    }),
  }),
  rollApiKey: defineRoute({
    method: "POST",
    path: "/api-key/{id}/roll",
    service,
    permission: "apiKeys.create",
    jwtOnly: true,
    errors: [400001, 400002, 404001, 409005, 413000, 415000, 503000],
    body: { schema: apiKeyRollSchema, required: false },
    docs: () => ({
      tags: ["API keys"],
      summary: "Roll an API key: a new key with the same name, scopes and expiresAt; the old one keeps working for an overlap (JWT only; permission apiKeys.create)",
      description:
        "The new key is shown only in this response. The old key's expiresAt becomes now + expiresInSeconds (or stays, if sooner); from then on every gateway answers it 401020. " +
        "The new key acts for the user who rolled it, like a key that user created. A revoked or expired key cannot be rolled (409005). " +
        "503000 when the old key's new expiry could not be published to every gateway: retry (a retry of an expired key publishes it again before answering 409005).",
      request: { params: idParams },
      responses: { 201: { description: "The new key, with its secret", ...jsonContent(dataEnvelope(apiKeyWithSecretSchema)) } },
    }),
  }),
};
