// Who made a change and from where, as a service learns it from the request the gateway forwarded:
// the principal (its label included) from the internal token, the request id from X-Request-Id, the
// client's address from X-Forwarded-For (which the gateway sets to its own reading of the address,
// TRUSTED_PROXIES applied; a service accepts no request without the gateway's internal token) and the
// client's User-Agent, which the gateway passes on.
import { canonicalAddress } from "@crm/auth-cache";
import type { AuditActorType, Principal } from "@crm/contracts";

export interface AuditActor {
  type: AuditActorType;
  id: string | null;
  label: string | null;
}

export interface AuditContext {
  actor: AuditActor;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
}

/** What auditContextOf reads of a request (Express's, or a test's plain object). */
export interface AuditedRequest {
  principal?: Principal;
  requestId?: string;
  headers: Readonly<Record<string, string | string[] | undefined>>;
}

const ANONYMOUS: AuditActor = Object.freeze({ type: "anonymous", id: null, label: null });
/** The actor of work no request asked for (retention, the trash's purge). */
export const SYSTEM_CONTEXT: AuditContext = Object.freeze({ actor: Object.freeze({ type: "system", id: null, label: null }), requestId: null, ip: null, userAgent: null });

/** The actor a principal stands for; anonymous without one (sign-in, refresh). */
export function actorOf(principal: Principal | undefined): AuditActor {
  if (!principal) return ANONYMOUS;
  const label = principal.label ?? null;
  if (principal.authType === "apiKey") return { type: "apiKey", id: principal.apiKeyId, label };
  return { type: "user", id: principal.userId, label };
}

function header(req: AuditedRequest, name: string): string | null {
  const value = req.headers[name];
  const text = Array.isArray(value) ? value[0] : value;
  return text === undefined || text === "" ? null : text;
}

/** The request's context; `actor` replaces the principal's (a sign-in's user, a failed one's attempted email). */
export function auditContextOf(req: AuditedRequest, actor?: AuditActor): AuditContext {
  const forwarded = header(req, "x-forwarded-for")?.split(",")[0]?.trim();
  return {
    actor: actor ?? actorOf(req.principal),
    requestId: req.requestId ?? header(req, "x-request-id"),
    ip: forwarded ? canonicalAddress(forwarded) : null,
    // Bounded like every stored text a caller chooses.
    userAgent: header(req, "user-agent")?.slice(0, 512) ?? null,
  };
}
