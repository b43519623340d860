// API keys: created by a signed-in user, stored as a digest, revoked by write-through so every
// gateway refuses them on the next request.
import type { AuditContext } from "@crm/audit";
import { API_KEY_VISIBLE_CHARS, digestApiKey, generateApiKey, normalizeAllowedIp } from "@crm/auth-cache";
import { API_KEY_ROLL_DEFAULT_OVERLAP_S, isUuid, uuidv7, type ApiKeyCreate, type ApiKeyRoll, type ApiKeyUpdate, type Principal } from "@crm/contracts";
import { type ErrorDetail, errors } from "@crm/errors";
import { newestFirstPage, type Pagination } from "@crm/query-language";
import { recordLastUse, shortenActiveKeyExpiry } from "../persistence/api-key.statements";
import type { ApiKey, PrismaClient } from "../persistence/prisma";
import type { AuthStateService } from "./auth-state.service";
import type { IdentityAudit } from "./identity-audit";

/** One authenticated use, as a gateway reports it; `ip` is absent from gateways before extensions §E3.2. */
export interface KeyUse {
  id: string;
  at: Date;
  ip?: string;
}

export class ApiKeyService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly authState: AuthStateService,
    private readonly limits: { rateLimitKeyMax: number },
    private readonly audit: IdentityAudit,
  ) {}

  async create(principal: Principal, input: ApiKeyCreate, context: AuditContext): Promise<{ key: string; record: ApiKey }> {
    const userId = signedInUser(principal);
    const details: ErrorDetail[] = [];
    const scopes = [...new Set(input.scopes ?? [])];
    const held = new Set(principal.permissions);
    scopes.forEach((scope, i) => {
      if (!held.has(scope)) details.push({ path: `scopes.${i}`, message: `You do not hold the permission "${scope}"` });
    });
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) details.push({ path: "expiresAt", message: "expiresAt must be in the future" });
    const controls = this.accessControls(input, details);
    if (details.length > 0) throw errors.validationFailed(details);

    const key = generateApiKey();
    const record = await this.prisma.$transaction(async (tx) => {
      const record = await tx.apiKey.create({ data: { ...newKeyRow(key, principal.businessId, userId, { name: input.name, scopes, expiresAt }), ...controls } });
      await this.audit.keyCreated(tx, record, context);
      return record;
    });
    await this.authState.publishApiKey(record);
    return { key, record };
  }

  /**
   * Changes a key's name, allow-list or own rate limit (extensions §E3.2; JWT only, like creating
   * one). Written through to the shared store before answering, so the next request on any gateway
   * is decided by the new list and limit; a failed write-through is 503000, and a retry publishes again.
   */
  async update(principal: Principal, id: string, input: ApiKeyUpdate, context: AuditContext): Promise<ApiKey> {
    signedInUser(principal);
    const details: ErrorDetail[] = [];
    const controls = this.accessControls(input, details);
    if (details.length > 0) throw errors.validationFailed(details);
    const old = await this.get(principal, id);
    const record = await this.prisma.$transaction(async (tx) => {
      const record = await tx.apiKey.update({ where: { id: old.id }, data: { ...(input.name === undefined ? {} : { name: input.name }), ...controls } });
      await this.audit.keyUpdated(tx, old, record, context);
      return record;
    });
    await this.authState.publishApiKey(record);
    return record;
  }

  /** The columns for what `input` sets of `allowedIps` and `rateLimit`, normalised; problems go to `details`. */
  private accessControls(input: Pick<ApiKeyUpdate, "allowedIps" | "rateLimit">, details: ErrorDetail[]) {
    const columns: { allowedIps?: string[]; rateLimitMax?: number | null; rateLimitWindowSeconds?: number | null } = {};
    if (input.allowedIps !== undefined) {
      const normalised = (input.allowedIps ?? []).map((entry, i) => {
        const cidr = normalizeAllowedIp(entry);
        if (!cidr) details.push({ path: `allowedIps.${i}`, message: "Expected an IPv4 or IPv6 address or CIDR block" });
        return cidr;
      });
      // Stored empty for "any address" (Prisma has no null list); the API never accepts an empty one.
      columns.allowedIps = [...new Set(normalised.filter((cidr): cidr is string => cidr !== undefined))];
    }
    if (input.rateLimit !== undefined) {
      if (input.rateLimit && input.rateLimit.max > this.limits.rateLimitKeyMax) {
        details.push({ path: "rateLimit.max", message: `Must be at most ${this.limits.rateLimitKeyMax}` });
      }
      columns.rateLimitMax = input.rateLimit?.max ?? null;
      columns.rateLimitWindowSeconds = input.rateLimit?.windowSeconds ?? null;
    }
    return columns;
  }

  /**
   * A new key with the old one's name, scopes and expiry, created by the caller (so it acts with the
   * caller's permissions, like any key they create: a roll never lends anyone else's role). The old
   * key's expiry moves to now + the overlap unless it was already sooner, in the same transaction,
   * and is written through to the shared store before answering, so every gateway refuses it
   * (401020) from that moment. A failed write-through is 503000; the roll has happened, and a retry
   * rolls again (or, once the old key has expired, publishes its state again and answers 409005).
   */
  async roll(principal: Principal, id: string, input: ApiKeyRoll, context: AuditContext): Promise<{ key: string; record: ApiKey }> {
    const userId = signedInUser(principal);
    const old = await this.get(principal, id);
    const now = new Date();
    if (!isActive(old, now)) {
      await this.authState.publishApiKey(old);
      throw errors.apiKeyNotActive();
    }
    const overlapEnds = new Date(now.getTime() + (input.expiresInSeconds ?? API_KEY_ROLL_DEFAULT_OVERLAP_S) * 1000);
    const key = generateApiKey();
    const { rolled, record } = await this.prisma.$transaction(async (tx) => {
      const rolled = await shortenActiveKeyExpiry(tx, old.id, overlapEnds, now);
      if (!rolled) throw errors.apiKeyNotActive();
      const record = await tx.apiKey.create({
        // The allow-list and the rate limit go with it: a roll must not lift a restriction unnoticed.
        data: {
          ...newKeyRow(key, old.businessId, userId, { name: old.name, scopes: old.scopes, expiresAt: old.expiresAt }),
          allowedIps: old.allowedIps ?? [],
          rateLimitMax: old.rateLimitMax,
          rateLimitWindowSeconds: old.rateLimitWindowSeconds,
        },
      });
      await this.audit.keyRolled(tx, rolled, record, context);
      return { rolled, record };
    });
    await this.authState.publishApiKey(rolled);
    await this.authState.publishApiKey(record);
    return { key, record };
  }

  /**
   * Gateways report which keys authenticated and when, in batches: one statement per report, never
   * a write per request. A later report never moves lastUsedAt back, and no report moves it past now.
   */
  async recordUse(uses: ReadonlyArray<KeyUse>): Promise<void> {
    const latest = new Map<string, KeyUse>();
    for (const use of uses) {
      if (!isUuid(use.id)) continue;
      const seen = latest.get(use.id);
      if (!seen || use.at > seen.at) latest.set(use.id, use);
    }
    if (latest.size > 0) await recordLastUse(this.prisma, latest);
  }

  async list(principal: Principal, page: Pagination): Promise<{ rows: ApiKey[]; total: number }> {
    const where = { businessId: principal.businessId };
    return newestFirstPage(
      page,
      (window) => this.prisma.apiKey.findMany({ where, ...window }),
      () => this.prisma.apiKey.count({ where }),
    );
  }

  async get(principal: Principal, id: string): Promise<ApiKey> {
    const key = isUuid(id) ? await this.prisma.apiKey.findFirst({ where: { id, businessId: principal.businessId } }) : null;
    if (!key) throw errors.notFound();
    return key;
  }

  /**
   * Idempotent and retry-safe: revoking a revoked key answers the same record and publishes the
   * revoked state again. The database may already say revoked when the store write failed (503000),
   * so a retry must repair the gateways' cache rather than trust the database and skip the write.
   */
  async revoke(principal: Principal, id: string, context: AuditContext): Promise<ApiKey> {
    let key = await this.get(principal, id);
    if (!key.revokedAt) {
      // Audited only by the call that revoked it: a repeat changes nothing.
      key = await this.prisma.$transaction(async (tx) => {
        const { count } = await tx.apiKey.updateMany({ where: { id: key.id, revokedAt: null }, data: { revokedAt: new Date() } });
        const revoked = await tx.apiKey.findUniqueOrThrow({ where: { id: key.id } });
        if (count === 1) await this.audit.keyRevoked(tx, revoked, context);
        return revoked;
      });
    }
    await this.authState.publishApiKey(key);
    return key;
  }
}

/** Keys are made and rolled by signed-in users only (decisions §5): an API key cannot mint keys. */
function signedInUser(principal: Principal): string {
  if (principal.authType !== "jwt" || !principal.userId) throw errors.insufficientPermissions();
  return principal.userId;
}

function isActive(key: ApiKey, now: Date): boolean {
  return key.revokedAt === null && (key.expiresAt === null || key.expiresAt > now);
}

function newKeyRow(key: string, businessId: string, createdByUserId: string, fields: { name: string; scopes: string[]; expiresAt: Date | null }) {
  return {
    id: uuidv7(),
    businessId,
    keyDigest: digestApiKey(key),
    keyPrefix: key.slice(0, API_KEY_VISIBLE_CHARS),
    createdByUserId,
    ...fields,
  };
}
