// Identity's audit entries (extensions §E7): users, API keys and the auth events, each written through
// the transaction (or statement) of its change. What an entry shows of a user or a key is what the API
// shows (identity-views.ts): no password hash, no key digest; a password change appears as
// "password": "[REDACTED]", and the new key of a roll is never shown at all.
import { type AuditActor, type AuditContext, type AuditChange, AuditWriter, diffChanges, type RawExecutor } from "@crm/audit";
import { apiKeyView, userView } from "./identity-views";
import type { ApiKey, User } from "../persistence/prisma";

/** Longest attempted email kept on a failed sign-in's entry. */
const ATTEMPTED_EMAIL_MAX = 254;

const userTarget = (id: string | null) => ({ type: "user", id });
const keyTarget = (id: string) => ({ type: "apiKey", id });

/** The user as an actor: the one who just signed in (or signed up). */
export function userActor(user: Pick<User, "id" | "email">): AuditActor {
  return { type: "user", id: user.id, label: user.email };
}

export class IdentityAudit {
  readonly writer: AuditWriter;

  constructor(now?: () => Date) {
    this.writer = new AuditWriter("identity", now);
  }

  private write(tx: RawExecutor, businessId: string | null, changes: AuditChange | AuditChange[], context: AuditContext): Promise<void> {
    return this.writer.record(tx, businessId, changes, context);
  }

  userCreated(tx: RawExecutor, user: User, context: AuditContext): Promise<void> {
    return this.write(tx, user.businessId, { action: "user.created", target: userTarget(user.id), changes: userView(user) }, context);
  }

  userUpdated(tx: RawExecutor, before: User, after: User, passwordChanged: boolean, context: AuditContext): Promise<void> {
    const changes: Record<string, unknown> = diffChanges(userView(before), userView(after));
    // The field's name is the rule: redactSecrets replaces its value, whatever is put here.
    if (passwordChanged) changes["password"] = { from: null, to: null };
    return this.write(tx, after.businessId, { action: "user.updated", target: userTarget(after.id), changes }, context);
  }

  userDeleted(tx: RawExecutor, user: User, context: AuditContext): Promise<void> {
    return this.write(tx, user.businessId, { action: "user.deleted", target: userTarget(user.id), changes: null }, context);
  }

  keyCreated(tx: RawExecutor, key: ApiKey, context: AuditContext): Promise<void> {
    return this.write(tx, key.businessId, { action: "apiKey.created", target: keyTarget(key.id), changes: apiKeyView(key) }, context);
  }

  keyUpdated(tx: RawExecutor, before: ApiKey, after: ApiKey, context: AuditContext): Promise<void> {
    return this.write(tx, after.businessId, { action: "apiKey.updated", target: keyTarget(after.id), changes: diffChanges(apiKeyView(before), apiKeyView(after)) }, context);
  }

  keyRevoked(tx: RawExecutor, key: ApiKey, context: AuditContext): Promise<void> {
    return this.write(tx, key.businessId, { action: "apiKey.revoked", target: keyTarget(key.id), changes: null }, context);
  }

  /** A roll changes two keys: the old one's expiry (rolled) and the new one (created). */
  keyRolled(tx: RawExecutor, old: ApiKey, created: ApiKey, context: AuditContext): Promise<void> {
    return this.write(
      tx,
      old.businessId,
      [
        { action: "apiKey.rolled", target: keyTarget(old.id), changes: null },
        { action: "apiKey.created", target: keyTarget(created.id), changes: apiKeyView(created) },
      ],
      context,
    );
  }

  signedIn(tx: RawExecutor, user: User, context: AuditContext): Promise<void> {
    return this.write(tx, user.businessId, { action: "auth.signedIn", target: userTarget(user.id), changes: null }, { ...context, actor: userActor(user) });
  }

  /**
   * A wrong password (or unknown email): the actor is anonymous, labelled with the email tried. An
   * unknown email belongs to no business, so its entry is kept but shown to nobody.
   */
  signInFailed(tx: RawExecutor, email: string, user: User | null, context: AuditContext): Promise<void> {
    const actor: AuditActor = { type: "anonymous", id: null, label: email.trim().slice(0, ATTEMPTED_EMAIL_MAX) };
    return this.write(tx, user?.businessId ?? null, { action: "auth.signInFailed", target: userTarget(user?.id ?? null), changes: null }, { ...context, actor });
  }

  signedOut(tx: RawExecutor, user: Pick<User, "id" | "businessId">, context: AuditContext): Promise<void> {
    return this.write(tx, user.businessId, { action: "auth.signedOut", target: userTarget(user.id), changes: null }, context);
  }

  /** A rotated-out refresh token presented again: whoever presented it is anonymous; the session it belonged to ends. */
  refreshReused(tx: RawExecutor, user: Pick<User, "id" | "businessId">, context: AuditContext): Promise<void> {
    return this.write(tx, user.businessId, { action: "auth.refreshReused", target: userTarget(user.id), changes: null }, context);
  }
}
