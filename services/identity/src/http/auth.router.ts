// /api/v1/auth/*. sign-up, sign-in and token/refresh are public: the gateway forwards them with an
// internal token that names no principal. logout and me need the caller.
import { Router, type Request, type Response } from "express";
import { auditContextOf } from "@crm/audit";
import { identityRoutes, ok, type MeView, type Principal } from "@crm/contracts";
import { errors } from "@crm/errors";
import { mountRoute, principalOf, requestBody } from "@crm/service-kit";
import { businessView, userView } from "../application/identity-views";
import type { PrismaClient } from "../persistence/prisma";
import type { AccountService, SignedIn } from "../application/account.service";
import type { SessionService } from "../application/session.service";
import { clearRefreshCookie, REFRESH_COOKIE, setRefreshCookie } from "./refresh-cookie";
import { clientAddress, readCookie } from "./request-meta";

export interface AuthRouterDeps {
  prisma: PrismaClient;
  accounts: AccountService;
  sessions: SessionService;
  allowSignUp: boolean;
  refreshTokenTtlS: number;
}

/** Routes that need no principal (mounted as the service app's publicApi: internal token required, no caller). */
export function publicAuthRouter(deps: AuthRouterDeps): Router {
  const router = Router();
  const signedIn = (req: Request, res: Response, status: number, result: SignedIn) => {
    setRefreshCookie(req, res, result.refreshToken, deps.refreshTokenTtlS);
    res.status(status).json(ok({ accessToken: result.accessToken, user: userView(result.user), business: businessView(result.business) }));
  };

  mountRoute(router, identityRoutes.signUp, async (req, res) => {
    // ALLOW_SIGN_UP=false: the route exists but is closed.
    if (!deps.allowSignUp) throw errors.forbidden();
    const input = requestBody(identityRoutes.signUp, req);
    signedIn(req, res, 201, await deps.accounts.signUp(input, auditContextOf(req)));
  });

  mountRoute(router, identityRoutes.signIn, async (req, res) => {
    const input = requestBody(identityRoutes.signIn, req);
    const result = await deps.accounts.signIn(input, clientAddress(req), auditContextOf(req));
    if ("lockedForMs" in result) {
      res.setHeader("Retry-After", String(Math.max(1, Math.ceil(result.lockedForMs / 1000))));
      throw errors.tooManyRequests();
    }
    signedIn(req, res, 200, result);
  });

  mountRoute(router, identityRoutes.refreshToken, async (req, res) => {
    const result = await deps.sessions.refresh(readCookie(req, REFRESH_COOKIE), auditContextOf(req));
    setRefreshCookie(req, res, result.refreshToken, deps.refreshTokenTtlS);
    res.json(ok({ accessToken: result.accessToken }));
  });

  return router;
}

/** Routes that need the caller; mounted under the authenticated /api/v1 router. */
export function authRouter(deps: AuthRouterDeps): Router {
  const router = Router();

  mountRoute(router, identityRoutes.logout, async (req, res) => {
    const principal = jwtPrincipal(req);
    await deps.sessions.revoke(principal.sessionId, { action: "signedOut", user: { id: principal.userId ?? "", businessId: principal.businessId }, context: auditContextOf(req) });
    clearRefreshCookie(req, res);
    res.status(204).end();
  });

  mountRoute(router, identityRoutes.me, async (req, res) => {
    const principal = principalOf(req);
    const business = await deps.prisma.business.findUnique({ where: { id: principal.businessId } });
    if (!business) throw errors.businessRequired();
    let user = null;
    if (principal.authType === "jwt" && principal.userId) {
      user = await deps.prisma.user.findFirst({ where: { id: principal.userId, businessId: business.id } });
      if (!user) throw errors.accessTokenNotWhitelisted();
    }
    const me: MeView = {
      user: user ? userView(user) : null,
      business: businessView(business),
      permissions: principal.permissions,
      authType: principal.authType,
    };
    res.json(ok(me));
  });

  return router;
}

function jwtPrincipal(req: Request): Principal & { sessionId: string } {
  const principal = principalOf(req);
  if (principal.authType !== "jwt" || !principal.sessionId) throw errors.insufficientPermissions();
  return principal as Principal & { sessionId: string };
}
