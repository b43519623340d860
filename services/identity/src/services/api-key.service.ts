// API keys: created by a signed-in user, stored as a digest, revoked by write-through so every
// gateway refuses them on the next request.
import { API_KEY_VISIBLE_CHARS, digestApiKey, generateApiKey } from "@crm/auth-cache";
import { isUuid, uuidv7, type ApiKeyCreate, type Principal } from "@crm/contracts";
import { AppError, type ErrorDetail } from "@crm/errors";
import type { Pagination } from "@crm/query-language";
import type { ApiKey, PrismaClient } from "../persistence/prisma";
import type { AuthStateService } from "./auth-state.service";

export class ApiKeyService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly authState: AuthStateService,
  ) {}

  async create(principal: Principal, input: ApiKeyCreate): Promise<{ key: string; record: ApiKey }> {
    if (principal.authType !== "jwt" || !principal.userId) throw new AppError(401014);
    const details: ErrorDetail[] = [];
    const scopes = [...new Set(input.scopes ?? [])];
    const held = new Set(principal.permissions);
    scopes.forEach((scope, i) => {
      if (!held.has(scope)) details.push({ path: `scopes.${i}`, message: `You do not hold the permission "${scope}"` });
    });
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && expiresAt.getTime() <= Date.now()) details.push({ path: "expiresAt", message: "expiresAt must be in the future" });
    if (details.length > 0) throw new AppError(400001, details);

    const key = generateApiKey();
    const record = await this.prisma.apiKey.create({
      data: {
        id: uuidv7(),
        businessId: principal.businessId,
        name: input.name,
        keyDigest: digestApiKey(key),
        keyPrefix: key.slice(0, API_KEY_VISIBLE_CHARS),
        scopes,
        expiresAt,
        createdByUserId: principal.userId,
      },
    });
    await this.authState.publishApiKey(record);
    return { key, record };
  }

  async list(principal: Principal, page: Pagination): Promise<{ rows: ApiKey[]; total: number }> {
    const where = { businessId: principal.businessId };
    const [rows, total] = await Promise.all([
      this.prisma.apiKey.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "desc" }], skip: page.skip, take: page.take }),
      this.prisma.apiKey.count({ where }),
    ]);
    return { rows, total };
  }

  async get(principal: Principal, id: string): Promise<ApiKey> {
    const key = isUuid(id) ? await this.prisma.apiKey.findFirst({ where: { id, businessId: principal.businessId } }) : null;
    if (!key) throw new AppError(404001);
    return key;
  }

  /**
   * Idempotent and retry-safe: revoking a revoked key answers the same record and publishes the
   * revoked state again. The database may already say revoked when the store write failed (503000),
   * so a retry must repair the gateways' cache rather than trust the database and skip the write.
   */
  async revoke(principal: Principal, id: string): Promise<ApiKey> {
    let key = await this.get(principal, id);
    if (!key.revokedAt) {
      await this.prisma.apiKey.updateMany({ where: { id: key.id, revokedAt: null }, data: { revokedAt: new Date() } });
      key = await this.prisma.apiKey.findUniqueOrThrow({ where: { id: key.id } });
    }
    await this.authState.publishApiKey(key);
    return key;
  }
}
