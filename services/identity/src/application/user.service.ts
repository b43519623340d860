// Users of a business. Every change that affects authorization is written through to the shared
// auth cache in the same request, so the gateway sees it on the caller's very next request.
import type { AuditContext } from "@crm/audit";
import { isUuid, uuidv7, type Principal, type UserCreate, type UserUpdate } from "@crm/contracts";
import { errors, validationError } from "@crm/errors";
import { newestFirstPage, type Pagination } from "@crm/query-language";
import type { PasswordHasher } from "../domain/password-hasher";
import { isSelf, mayManageUser, type UserChange } from "../domain/user-management-policy";
import type { PrismaClient, User } from "../persistence/prisma";
import { conflictOnUnique, emailKey } from "./account.service";
import type { AuthStateService } from "./auth-state.service";
import type { IdentityAudit } from "./identity-audit";
import type { SessionService } from "./session.service";
import type { SignInThrottle } from "./sign-in-throttle";

export class UserService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionService,
    private readonly authState: AuthStateService,
    private readonly throttle: SignInThrottle,
    private readonly audit: IdentityAudit,
  ) {}

  async list(principal: Principal, page: Pagination): Promise<{ rows: User[]; total: number }> {
    const where = { businessId: principal.businessId };
    return newestFirstPage(
      page,
      (window) => this.prisma.user.findMany({ where, ...window }),
      () => this.prisma.user.count({ where }),
    );
  }

  /** Another business's user is indistinguishable from a missing one (404001). */
  async get(principal: Principal, id: string): Promise<User> {
    const user = isUuid(id) ? await this.prisma.user.findFirst({ where: { id, businessId: principal.businessId } }) : null;
    if (!user) throw errors.notFound();
    return user;
  }

  async create(principal: Principal, input: UserCreate, context: AuditContext): Promise<User> {
    const role = input.role ?? "MEMBER";
    assertMayManage(principal, { action: "create", role });
    const key = emailKey(input.email);
    if (await this.prisma.user.findUnique({ where: { emailKey: key }, select: { id: true } })) throw errors.alreadyExists();
    const passwordHash = await this.hasher.hash(input.password);
    const user = await this.prisma
      .$transaction(async (tx) => {
        const user = await tx.user.create({
          data: {
            id: uuidv7(),
            businessId: principal.businessId,
            email: input.email.trim(),
            emailKey: key,
            passwordHash,
            firstName: input.firstName ?? null,
            lastName: input.lastName ?? null,
            role,
          },
        });
        await this.audit.userCreated(tx, user, context);
        return user;
      })
      .catch(conflictOnUnique);
    await this.authState.publishUser(user);
    return user;
  }

  /**
   * `clientAddress`: the caller's, for the sign-in throttle that a wrong `currentPassword` counts on.
   * Extensions §E10: one's own password or email changes only with the current password, and ends
   * every other session of the user; another user's new password ends all of theirs.
   */
  async update(principal: Principal, id: string, input: UserUpdate, clientAddress: string, context: AuditContext): Promise<User> {
    const current = await this.get(principal, id);
    const changesEmail = input.email !== undefined && input.email.trim() !== current.email;
    const changesCredentials = input.password !== undefined || changesEmail;
    assertMayManage(principal, { action: "update", target: current, role: input.role, changesCredentials });
    const own = isSelf(principal, current.id);
    if (own && changesCredentials) await this.confirmPassword(current, input.currentPassword, clientAddress, context);
    if (input.role !== undefined && input.role !== current.role && current.role === "OWNER") await this.assertAnotherOwner(current, "role");
    const data: Partial<User> = {};
    if (input.email !== undefined) {
      data.email = input.email.trim();
      data.emailKey = emailKey(input.email);
    }
    if (input.password !== undefined) data.passwordHash = await this.hasher.hash(input.password);
    if (input.firstName !== undefined) data.firstName = input.firstName;
    if (input.lastName !== undefined) data.lastName = input.lastName;
    if (input.role !== undefined) data.role = input.role;
    const user = await this.prisma
      .$transaction(async (tx) => {
        const user = await tx.user.update({ where: { id: current.id }, data });
        await this.audit.userUpdated(tx, current, user, input.password !== undefined, context);
        return user;
      })
      .catch(conflictOnUnique);
    await this.authState.publishUser(user);
    // Whoever changed them, a session opened with the old credentials ends; the caller's own session
    // survives their own change. An administrator's new email for someone else leaves their sessions be.
    if (input.password !== undefined || (own && changesEmail)) await this.revokeSessionsExcept(user.id, own ? principal.sessionId : null);
    return user;
  }

  /**
   * The caller proves they are the user, not only someone holding their access token: a missing
   * `currentPassword` is 400001, a wrong one 401001 and a failed sign-in for the (email, address) pair,
   * which locks like sign-in does (429000 with Retry-After, without checking anything).
   */
  private async confirmPassword(user: User, currentPassword: string | undefined, clientAddress: string, context: AuditContext): Promise<void> {
    if (currentPassword === undefined) throw validationError("currentPassword", "Required to change your own password or email");
    const lockedForMs = await this.throttle.lockedFor(user.emailKey, clientAddress);
    if (lockedForMs > 0) throw errors.tooManyRequests(undefined, { retryAfterS: lockedForMs / 1000 });
    if (!(await this.hasher.verify(currentPassword, user.passwordHash))) {
      await this.throttle.recordFailure(user.emailKey, clientAddress);
      await this.audit.signInFailed(this.prisma, user.email, user, context);
      throw errors.invalidCredentials();
    }
  }

  /** Deletes a user: their sessions end and the keys they created are revoked, effective at once. */
  async delete(principal: Principal, id: string, context: AuditContext): Promise<User> {
    const user = await this.get(principal, id);
    assertMayManage(principal, { action: "delete", target: user });
    if (user.role === "OWNER") await this.assertAnotherOwner(user, "id");
    // Every key of theirs is published as revoked, also those a failed earlier attempt already
    // revoked in the database: a retry after 503000 repairs what that attempt left in the cache.
    await this.prisma.apiKey.updateMany({ where: { createdByUserId: user.id, revokedAt: null }, data: { revokedAt: new Date() } });
    const keys = await this.prisma.apiKey.findMany({ where: { createdByUserId: user.id } });
    for (const key of keys) await this.authState.publishApiKey(key);
    await this.authState.publishUserDeleted(user.id);
    await this.sessions.revokeAllOf(user.id);
    await this.prisma.$transaction(async (tx) => {
      await tx.user.delete({ where: { id: user.id } });
      await this.audit.userDeleted(tx, user, context);
    });
    return user;
  }

  private async revokeSessionsExcept(userId: string, keep: string | null): Promise<void> {
    const sessions = await this.prisma.session.findMany({ where: { userId, revokedAt: null }, select: { id: true } });
    for (const { id } of sessions) if (id !== keep) await this.sessions.revoke(id);
  }

  /** A business never loses its last OWNER. */
  private async assertAnotherOwner(user: User, path: string): Promise<void> {
    const owners = await this.prisma.user.count({ where: { businessId: user.businessId, role: "OWNER", id: { not: user.id } } });
    if (owners === 0) throw validationError(path, "A business needs at least one OWNER");
  }
}

/** The rule is mayManageUser's (services/identity/README.md, "Managing users"); a refusal is 401014. */
function assertMayManage(principal: Principal, change: UserChange): void {
  if (!mayManageUser(principal, change)) throw errors.insufficientPermissions();
}
