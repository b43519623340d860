// The short-lived token the gateway attaches to every forwarded request and internal call. Services
// accept no request without it and take the caller's business and permissions from it, never from the
// request. It also says which version of the internal interface the caller speaks (issue 38: services
// of neighbouring releases run side by side): the routes, bodies, forwarded headers and claims of
// `/internal/...` and forwarded calls evolve expand-then-contract within a version (a reader ignores
// what it does not know; a producer keeps a field one release after its last reader), and only a
// change a previous release cannot read raises INTERNAL_API_VERSION.
import { createSecretKey, type KeyObject } from "node:crypto";
import jwt from "jsonwebtoken";
import { principalSchema, type Principal } from "@crm/contracts";
import { errors } from "@crm/errors";

const AUDIENCE = "crm-internal";
const ISSUER = "crm-gateway";

/** The internal interface's version this build speaks (`v` in every token it signs). */
export const INTERNAL_API_VERSION = 1;
/** Releases before the claim sent none: they speak version 1. */
const UNSTATED_VERSION = 1;
/** A caller of another version is a neighbour mid-deploy: the client is told to try again shortly. */
const OTHER_VERSION_RETRY_AFTER_S = 5;

export interface InternalClaims {
  /** Absent on service-to-service calls that act for nobody (e.g. API-key resolution). */
  principal?: Principal;
  requestId?: string;
}

// Every forwarded request signs one token and verifies one; with a string secret jsonwebtoken
// builds a key object per call, which costs ~50x more than reusing one (see `pnpm bench`).
const keys = new Map<string, KeyObject>();
function keyFor(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) keys.set(secret, (key = createSecretKey(Buffer.from(secret, "utf8"))));
  return key;
}

/** `issuedAtSeconds`: the token's `iat` (its `exp` is `ttlSeconds` later); now when omitted. */
export function signInternalToken(claims: InternalClaims, secret: string, ttlSeconds = 60, issuedAtSeconds?: number): string {
  const versioned = { ...claims, v: INTERNAL_API_VERSION };
  const payload = issuedAtSeconds === undefined ? versioned : { ...versioned, iat: issuedAtSeconds };
  return jwt.sign(payload, keyFor(secret), { algorithm: "HS256", audience: AUDIENCE, issuer: ISSUER, expiresIn: ttlSeconds });
}

// The gateway signs a token per request, and the same caller's tokens signed within one second are
// the same bytes (the claims carry seconds), so a busy caller's token arrives many times: a token
// verified once with a secret stays verified until it expires. Verifying again would give the same
// answer (HMAC is deterministic) at the cost of a signature check and a schema parse per request.
// Bounded: cleared when full.
const VERIFIED_MAX = 10_000;
const verified = new Map<string, { secret: string; claims: InternalClaims; expiresAtMs: number }>();

/**
 * Throws 401000 for anything but a valid, unexpired token signed with `secret`, and 503000 (with
 * Retry-After) for one of another internal interface version: the caller is of a release this one
 * cannot serve, which only a deploy in progress (or a mistaken one) makes, and the client's retry
 * meets a replica of a matching release.
 */
export function verifyInternalToken(token: string, secret: string): InternalClaims {
  const known = verified.get(token);
  if (known && known.secret === secret && Date.now() < known.expiresAtMs) return known.claims;
  let payload: jwt.JwtPayload | string;
  try {
    payload = jwt.verify(token, keyFor(secret), { algorithms: ["HS256"], audience: AUDIENCE, issuer: ISSUER });
  } catch (cause) {
    throw errors.authenticationRequired(undefined, { cause });
  }
  if (typeof payload === "string") throw errors.authenticationRequired();
  const version = payload["v"] ?? UNSTATED_VERSION;
  if (version !== INTERNAL_API_VERSION) {
    throw errors.unavailable(undefined, {
      retryAfterS: OTHER_VERSION_RETRY_AFTER_S,
      cause: new Error(`a caller of internal interface version ${String(version)}; this release speaks ${INTERNAL_API_VERSION}`),
    });
  }
  const claims: InternalClaims = {};
  if (payload.principal !== undefined) {
    const parsed = principalSchema.safeParse(payload.principal);
    if (!parsed.success) throw errors.authenticationRequired();
    // Shared by every request that presents this token: nobody may change it.
    claims.principal = Object.freeze({ ...parsed.data, permissions: Object.freeze(parsed.data.permissions) as string[] });
  }
  if (typeof payload.requestId === "string") claims.requestId = payload.requestId;
  Object.freeze(claims);
  if (typeof payload.exp === "number") {
    if (verified.size >= VERIFIED_MAX) verified.clear();
    verified.set(token, { secret, claims, expiresAtMs: payload.exp * 1000 });
  }
  return claims;
}
