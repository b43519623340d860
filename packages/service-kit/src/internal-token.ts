// The short-lived token the gateway attaches to every forwarded request. Services accept no
// request without it and take the caller's business and permissions from it, never from the request.
import { createSecretKey, type KeyObject } from "node:crypto";
import jwt from "jsonwebtoken";
import { principalSchema, type Principal } from "@crm/contracts";
import { errors } from "@crm/errors";

const AUDIENCE = "crm-internal";
const ISSUER = "crm-gateway";

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
  const payload = issuedAtSeconds === undefined ? claims : { ...claims, iat: issuedAtSeconds };
  return jwt.sign(payload, keyFor(secret), { algorithm: "HS256", audience: AUDIENCE, issuer: ISSUER, expiresIn: ttlSeconds });
}

// The gateway signs a token per request, and the same caller's tokens signed within one second are
// the same bytes (the claims carry seconds), so a busy caller's token arrives many times: a token
// verified once with a secret stays verified until it expires. Verifying again would give the same
// answer (HMAC is deterministic) at the cost of a signature check and a schema parse per request.
// Bounded: cleared when full.
const VERIFIED_MAX = 10_000;
const verified = new Map<string, { secret: string; claims: InternalClaims; expiresAtMs: number }>();

/** Throws 401000 for anything but a valid, unexpired token signed with `secret`. */
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
