// Sign-up and sign-in: who may start a session.
import type { AuditContext } from "@crm/audit";
import type { SignIn, SignUp } from "@crm/contracts";
import { uuidv7 } from "@crm/contracts";
import { errors } from "@crm/errors";
import type { PasswordHasher } from "../domain/password-hasher";
import { Prisma, type Business, type PrismaClient, type User } from "../persistence/prisma";
import { type IdentityAudit, userActor } from "./identity-audit";
import type { SignInThrottle } from "./sign-in-throttle";
import type { IssuedTokens, SessionService } from "./session.service";

export interface SignedIn extends IssuedTokens {
  user: User;
  business: Business;
}

export function emailKey(email: string): string {
  return email.trim().toLowerCase();
}

/** Prisma's unique-violation, as the catalogue's conflict. */
export function conflictOnUnique(err: unknown): never {
  if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === "P2002") throw errors.alreadyExists();
  throw err;
}

export class AccountService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly hasher: PasswordHasher,
    private readonly sessions: SessionService,
    private readonly throttle: SignInThrottle,
    private readonly audit: IdentityAudit,
  ) {}

  /** `context`: the request; the new owner is the actor of their own `user.created`. */
  async signUp(input: SignUp, context: AuditContext): Promise<SignedIn> {
    const key = emailKey(input.email);
    if (await this.prisma.user.findUnique({ where: { emailKey: key }, select: { id: true } })) throw errors.alreadyExists();
    const passwordHash = await this.hasher.hash(input.password);
    const businessId = uuidv7();
    const { user, business } = await this.prisma
      .$transaction(async (tx) => {
        const business = await tx.business.create({ data: { id: businessId, name: input.businessName } });
        const user = await tx.user.create({
          data: {
            id: uuidv7(),
            businessId,
            email: input.email.trim(),
            emailKey: key,
            passwordHash,
            firstName: input.firstName ?? null,
            lastName: input.lastName ?? null,
            role: "OWNER",
          },
        });
        await this.audit.userCreated(tx, user, { ...context, actor: userActor(user) });
        return { user, business };
      })
      .catch(conflictOnUnique);
    return { user, business, ...(await this.sessions.start(user)) };
  }

  /**
   * Wrong email and wrong password answer the same (401001) after the same work; a locked
   * (email, address) pair answers 429000 without checking anything.
   */
  async signIn(input: SignIn, clientAddress: string, context: AuditContext): Promise<SignedIn | { lockedForMs: number }> {
    const key = emailKey(input.email);
    const lockedForMs = await this.throttle.lockedFor(key, clientAddress);
    if (lockedForMs > 0) return { lockedForMs };
    const user = await this.prisma.user.findUnique({ where: { emailKey: key }, include: { business: true } });
    const valid = user ? await this.hasher.verify(input.password, user.passwordHash) : await this.hasher.verifyAgainstDummy(input.password);
    if (!user || !valid) {
      await this.throttle.recordFailure(key, clientAddress);
      await this.audit.signInFailed(this.prisma, input.email, user, context);
      throw errors.invalidCredentials();
    }
    await this.throttle.recordSuccess(key, clientAddress);
    if (!user.business) throw errors.businessRequired();
    const { business, ...plain } = user;
    return { user: plain, business, ...(await this.sessions.start(plain, context)) };
  }
}
