// Sessions: sign-in issues an access token (allow-listed in the shared store for its lifetime) and
// a refresh token (stored as a digest); refresh rotates the refresh token; presenting a rotated-out
// one revokes the whole session, its live access tokens included (decisions §4, §8). The session row
// is the record; the store's allow-list caches it (AuthStateService.resolveAccessTokens fills a miss)
// and carries revocations to every gateway at once.
import type { AuditContext } from "@crm/audit";
import { AccessTokenCodec, type AuthCache } from "@crm/auth-cache";
import { uuidv7 } from "@crm/contracts";
import { errors } from "@crm/errors";
import { digestToken, newRefreshToken } from "../domain/opaque-token";
import type { PrismaClient, User } from "../persistence/prisma";
import { IdentityAudit } from "./identity-audit";
import { published } from "./published";

export interface SessionTtls {
  accessTokenTtlS: number;
  refreshTokenTtlS: number;
}

/** A revocation's audit entry: a sign-out (only when it ends a live session) or a refresh token's reuse (always). */
export interface RevocationAudit {
  action: "signedOut" | "refreshReused";
  user: Pick<User, "id" | "businessId">;
  context: AuditContext;
}

export interface IssuedTokens {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
}

export class SessionService {
  private readonly codec: AccessTokenCodec;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly cache: AuthCache,
    jwtSecret: string,
    private readonly ttls: SessionTtls,
    /** Epoch ms: what expiry and lifetimes are measured against (tests move it instead of sleeping). */
    private readonly clock: () => number = Date.now,
    private readonly audit: IdentityAudit = new IdentityAudit(),
  ) {
    this.codec = new AccessTokenCodec(jwtSecret);
  }

  /** A new session for a user who just proved who they are; `signIn`: the request, when this is a sign-in (its `auth.signedIn` entry commits with the session). */
  async start(user: User, signIn?: AuditContext): Promise<IssuedTokens> {
    const sessionId = uuidv7();
    const refreshToken = newRefreshToken();
    const expiresAt = this.refreshExpiry();
    await this.prisma.$transaction(async (tx) => {
      await tx.session.create({
        data: { id: sessionId, userId: user.id, expiresAt, refreshTokens: { create: { digest: digestToken(refreshToken), expiresAt } } },
      });
      if (signIn) await this.audit.signedIn(tx, user, signIn);
    });
    const { token: accessToken } = await this.issueAccessToken(user, sessionId);
    return { accessToken, refreshToken, sessionId };
  }

  /**
   * Rotates a refresh token. Unknown, expired or revoked: 401012. Already used: 401013 and the session
   * ends, with an `auth.refreshReused` entry (`context`: the request's).
   */
  async refresh(presented: string | undefined, context: AuditContext): Promise<IssuedTokens> {
    if (!presented) throw errors.refreshTokenNotWhitelisted();
    const digest = digestToken(presented);
    const row = await this.prisma.refreshToken.findUnique({ where: { digest }, include: { session: { include: { user: true } } } });
    if (!row) throw errors.refreshTokenNotWhitelisted();
    const { session } = row;
    // Reuse is checked first: a rotated-out token is answered 401013 even once its session has ended.
    if (row.usedAt) {
      await this.revoke(session.id, { action: "refreshReused", user: session.user, context });
      throw errors.invalidRefreshToken();
    }
    if (session.revokedAt) throw errors.refreshTokenNotWhitelisted();
    const now = new Date(this.clock());
    if (row.expiresAt <= now || session.expiresAt <= now) throw errors.refreshTokenNotWhitelisted();
    if (!session.user.businessId) throw errors.businessRequired();

    const next = newRefreshToken();
    const expiresAt = this.refreshExpiry();
    const outcome = await this.prisma.$transaction(async (tx) => {
      // The session row first, conditional on it being live: this UPDATE locks the row, so a
      // revocation (an UPDATE of the same row) has either committed already (count 0: refused here)
      // or waits for this commit and then runs its allow-list cleanup after it. It also serialises
      // concurrent refreshes of one session.
      const live = await tx.session.updateMany({ where: { id: session.id, revokedAt: null, expiresAt: { gt: now } }, data: { expiresAt } });
      if (live.count !== 1) return "ended";
      // Conditional on usedAt still being null: of two concurrent refreshes with one token, one wins
      // and the other is treated as reuse.
      const claimed = await tx.refreshToken.updateMany({ where: { digest, usedAt: null }, data: { usedAt: now } });
      if (claimed.count !== 1) return "reused";
      await tx.refreshToken.create({ data: { digest: digestToken(next), sessionId: session.id, expiresAt } });
      return "rotated";
    });
    if (outcome === "ended") throw errors.refreshTokenNotWhitelisted();
    if (outcome === "reused") {
      await this.revoke(session.id, { action: "refreshReused", user: session.user, context });
      throw errors.invalidRefreshToken();
    }
    const { token: accessToken, jti } = await this.issueAccessToken(session.user, session.id);
    // A revocation that committed after our transaction may have cleaned the allow-list before the
    // new jti was on it. Publish first, then look: either the revocation is visible now, and the jti
    // is withdrawn before anyone sees the token, or it commits after this read, and its cleanup
    // (which follows its commit) finds the jti already published and removes it. Either way the
    // revocation wins, and revoke() itself needs no atomic read-and-delete.
    if (!(await this.isLive(session.id))) {
      await published(this.cache.withdrawAccessToken(jti, session.id, this.accessTokenTtlMs()));
      throw errors.refreshTokenNotWhitelisted();
    }
    return { accessToken, refreshToken: next, sessionId: session.id };
  }

  /**
   * Ends a session: its refresh token and every live access token stop working at once. The row is
   * marked first, the cache after, with tombstones: an access token published concurrently is
   * withdrawn by its publisher (see refresh), and a gateway's fill cannot put one back (see
   * AuthCache.revokeSession), so neither outlives this. Should the store lose the tombstones later,
   * the next gateway to miss asks the database, which says revoked.
   */
  async revoke(sessionId: string, audit?: RevocationAudit): Promise<void> {
    await this.prisma.$transaction(async (tx) => {
      const { count } = await tx.session.updateMany({ where: { id: sessionId, revokedAt: null }, data: { revokedAt: new Date() } });
      if (audit?.action === "refreshReused") await this.audit.refreshReused(tx, audit.user, audit.context);
      else if (audit && count === 1) await this.audit.signedOut(tx, audit.user, audit.context);
    });
    // A retry (of a logout answered 503000) repeats this cleanup: the UPDATE above is then a no-op.
    await published(this.cache.revokeSession(sessionId, this.accessTokenTtlMs()));
  }

  /** Every session of a user (deletion, password change). */
  async revokeAllOf(userId: string): Promise<void> {
    const sessions = await this.prisma.session.findMany({ where: { userId, revokedAt: null }, select: { id: true } });
    for (const { id } of sessions) await this.revoke(id);
  }

  private async issueAccessToken(user: User, sessionId: string): Promise<{ token: string; jti: string }> {
    const jti = uuidv7();
    const token = this.codec.sign({ sub: user.id, businessId: user.businessId, jti, sid: sessionId }, this.ttls.accessTokenTtlS, this.clock());
    await published(this.cache.allowAccessToken(jti, sessionId, this.ttls.accessTokenTtlS * 1000));
    return { token, jti };
  }

  private async isLive(sessionId: string): Promise<boolean> {
    const session = await this.prisma.session.findUnique({ where: { id: sessionId }, select: { revokedAt: true } });
    return session !== null && session.revokedAt === null;
  }

  /** Tombstones live as long as the longest-lived access token they refuse. */
  private accessTokenTtlMs(): number {
    return this.ttls.accessTokenTtlS * 1000;
  }

  private refreshExpiry(): Date {
    return new Date(this.clock() + this.ttls.refreshTokenTtlS * 1000);
  }
}
