// The short-lived token the gateway attaches to every forwarded request. Services accept no
// request without it and take the caller's business and permissions from it, never from the request.
import jwt from "jsonwebtoken";
import { principalSchema, type Principal } from "@crm/contracts";
import { AppError } from "@crm/errors";

const AUDIENCE = "crm-internal";
const ISSUER = "crm-gateway";

export interface InternalClaims {
  /** Absent on service-to-service calls that act for nobody (e.g. API-key resolution). */
  principal?: Principal;
  requestId?: string;
}

export function signInternalToken(claims: InternalClaims, secret: string, ttlSeconds = 60): string {
  return jwt.sign(claims, secret, { algorithm: "HS256", audience: AUDIENCE, issuer: ISSUER, expiresIn: ttlSeconds });
}

/** Throws 401000 for anything but a valid, unexpired token signed with `secret`. */
export function verifyInternalToken(token: string, secret: string): InternalClaims {
  let payload: jwt.JwtPayload | string;
  try {
    payload = jwt.verify(token, secret, { algorithms: ["HS256"], audience: AUDIENCE, issuer: ISSUER });
  } catch (cause) {
    throw new AppError(401000, undefined, { cause });
  }
  if (typeof payload === "string") throw new AppError(401000);
  const claims: InternalClaims = {};
  if (payload.principal !== undefined) {
    const parsed = principalSchema.safeParse(payload.principal);
    if (!parsed.success) throw new AppError(401000);
    claims.principal = parsed.data;
  }
  if (typeof payload.requestId === "string") claims.requestId = payload.requestId;
  return claims;
}
