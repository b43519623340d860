import type { CookieOptions, Request, Response } from "express";
import { wantsSecureCookie } from "./request-meta";

export const REFRESH_COOKIE = "refreshToken";
/** Sent by the browser only to the auth endpoints (decisions §4). */
export const REFRESH_COOKIE_PATH = "/api/v1/auth";

function options(req: Request): CookieOptions {
  return { httpOnly: true, path: REFRESH_COOKIE_PATH, sameSite: "lax", secure: wantsSecureCookie(req) };
}

export function setRefreshCookie(req: Request, res: Response, token: string, ttlSeconds: number): void {
  res.cookie(REFRESH_COOKIE, token, { ...options(req), maxAge: ttlSeconds * 1000 });
}

export function clearRefreshCookie(req: Request, res: Response): void {
  res.cookie(REFRESH_COOKIE, "", { ...options(req), maxAge: 0 });
}
