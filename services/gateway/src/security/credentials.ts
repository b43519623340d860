// Which credential a request presents (interface §5, decisions §4): X-Api-Key wins over
// Authorization; a bearer value starting with `svc_` is an API key, anything else a JWT.
import type { Request } from "express";
import { looksLikeApiKey } from "@crm/auth-cache";

export type Credential = { kind: "apiKey"; key: string } | { kind: "jwt"; token: string } | { kind: "malformed" } | { kind: "none" };

export function readCredential(req: Request): Credential {
  const apiKey = req.headers["x-api-key"];
  if (typeof apiKey === "string" && apiKey.trim() !== "") return { kind: "apiKey", key: apiKey.trim() };
  const authorization = req.headers.authorization?.trim();
  if (!authorization) return { kind: "none" };
  const match = /^Bearer\s+(\S+)$/i.exec(authorization);
  if (!match) return { kind: "malformed" };
  const value = match[1]!;
  return looksLikeApiKey(value) ? { kind: "apiKey", key: value } : { kind: "jwt", token: value };
}

/** For CORS: whether the request carries an API key, a JWT or cookie, or nothing at all. */
export function credentialMode(req: Request): "apiKey" | "jwt" | "none" {
  const credential = readCredential(req);
  if (credential.kind === "apiKey") return "apiKey";
  if (credential.kind !== "none" || req.headers.cookie) return "jwt";
  return "none";
}
