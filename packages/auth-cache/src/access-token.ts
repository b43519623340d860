// Access tokens: compact HS256 JWTs, signed by identity and verified by every gateway instance.
// Hand-rolled over a pre-built KeyObject because verification runs on every request: one HMAC and
// one JSON.parse, no per-call key import and no generic option handling (tens of thousands per
// second per core). Only HS256 is ever accepted, so algorithm-confusion tricks (`alg: none`) fail.
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from "node:crypto";

export interface AccessTokenClaims {
  /** User id. */
  sub: string;
  businessId: string | null;
  /** Token id: the allow-list key. */
  jti: string;
  /** Session (refresh family) id. */
  sid: string;
  iat: number;
  exp: number;
}

const HEADER = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url");
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

export class AccessTokenCodec {
  private readonly key: KeyObject;

  constructor(secret: string) {
    this.key = createSecretKey(Buffer.from(secret, "utf8"));
  }

  sign(claims: Omit<AccessTokenClaims, "iat" | "exp">, ttlSeconds: number, nowMs = Date.now()): string {
    const iat = Math.floor(nowMs / 1000);
    const payload: AccessTokenClaims = { ...claims, iat, exp: iat + ttlSeconds };
    const body = `${HEADER}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}`;
    return `${body}.${createHmac("sha256", this.key).update(body).digest("base64url")}`;
  }

  /** The claims of a well-formed, correctly signed, unexpired token; undefined for anything else. */
  verify(token: string, nowMs = Date.now()): AccessTokenClaims | undefined {
    if (token.length > 4096 || !JWT_SHAPE.test(token)) return undefined;
    const dot1 = token.indexOf(".");
    const dot2 = token.lastIndexOf(".");
    const signed = token.slice(0, dot2);
    const given = Buffer.from(token.slice(dot2 + 1), "base64url");
    const expected = createHmac("sha256", this.key).update(signed).digest();
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let header: unknown;
    let payload: unknown;
    try {
      header = JSON.parse(Buffer.from(token.slice(0, dot1), "base64url").toString("utf8"));
      payload = JSON.parse(Buffer.from(token.slice(dot1 + 1, dot2), "base64url").toString("utf8"));
    } catch {
      return undefined;
    }
    if (!isObject(header) || header.alg !== "HS256") return undefined;
    if (!isObject(payload)) return undefined;
    const { sub, businessId, jti, sid, iat, exp } = payload;
    if (typeof sub !== "string" || typeof jti !== "string" || typeof sid !== "string") return undefined;
    if (businessId !== null && businessId !== undefined && typeof businessId !== "string") return undefined;
    if (typeof exp !== "number" || typeof iat !== "number") return undefined;
    if (exp * 1000 <= nowMs) return undefined;
    return { sub, businessId: businessId ?? null, jti, sid, iat, exp };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
