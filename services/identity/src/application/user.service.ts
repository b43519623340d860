// Users of a business. Every change that affects authorization is written through to the shared
// auth cache in the same request, so the gateway sees it on the caller's very next request.
import { isUuid, uuidv7, type Principal, type UserCreate, type UserUpdate } from "@crm/contracts";
import { errors, validationError } from "@crm/errors";
import { newestFirstPage, type Pagination } from "@crm/query-language";
import type { PasswordHasher } from "../domain/password-hasher";
import { mayManageUser, type UserChange } from "../domain/user-management-policy";
import type { PrismaClient, User } from "../persistence/prisma";
import { conflictOnUnique, emailKey } from "./account.service";
import type { AuthStateService } from "./auth-state.service";
import type { SessionService } from "./session.service";

export class UserService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionService,
    private readonly authState: AuthStateService,
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

  async create(principal: Principal, input: UserCreate): Promise<User> {
    const role = input.role ?? "MEMBER";
    assertMayManage(principal, { action: "create", role });
    const key = emailKey(input.email);
    if (await this.prisma.user.findUnique({ where: { emailKey: key }, select: { id: true } })) throw errors.alreadyExists();
    const user = await this.prisma.user
      .create({
        data: {
          id: uuidv7(),
          businessId: principal.businessId,
          email: input.email.trim(),
          emailKey: key,
          passwordHash: await this.hasher.hash(input.password),
          firstName: input.firstName ?? null,
          lastName: input.lastName ?? null,
          role,
        },
      })
      .catch(conflictOnUnique);
    await this.authState.publishUser(user);
    return user;
  }

  async update(principal: Principal, id: string, input: UserUpdate): Promise<User> {
    const current = await this.get(principal, id);
    const changesCredentials = input.password !== undefined || (input.email !== undefined && input.email.trim() !== current.email);
    assertMayManage(principal, { action: "update", target: current, role: input.role, changesCredentials });
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
    const user = await this.prisma.user.update({ where: { id: current.id }, data }).catch(conflictOnUnique);
    await this.authState.publishUser(user);
    // A new password ends every other session of that user, as a careful user expects; the caller's
    // own session survives when they change their own password.
    if (input.password !== undefined) await this.revokeSessionsExcept(user.id, principal.sessionId);
    return user;
  }

  /** Deletes a user: their sessions end and the keys they created are revoked, effective at once. */
  async delete(principal: Principal, id: string): Promise<User> {
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
    await this.prisma.user.delete({ where: { id: user.id } });
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
