import { isUuid, uuidv7 } from "@crm/contracts";
import { newestFirstPage, type Pagination } from "@crm/query-language";
import type { SecretKeyring } from "../domain/secret-keyring";
import { Prisma, type PrismaClient, type Webhook } from "../generated/prisma/client";

const WEBHOOK = Prisma.raw(`"webhooks"."Webhook"`);

export interface NewWebhook {
  businessId: string;
  url: string;
  events: string[];
  description: string;
  /** The signing secret itself; stored sealed (see SecretKeyring), never as is. */
  secret: string;
  secretPrefix: string;
  /** Checked already (checkWebhookFilter); null delivers every subscribed event. */
  filter: string | null;
  autoDisableAfter: number | null;
}

export type WebhookChanges = Partial<
  Pick<
    Webhook,
    "url" | "events" | "description" | "isActive" | "secret" | "secretPrefix" | "filter" | "autoDisableAfter" | "consecutiveFailures" | "disabledReason" | "deactivatedAt"
  >
>;

/**
 * Webhook rows, always scoped by the caller's business: another tenant's webhook simply does not exist.
 * A secret given to create/update is sealed here, so nothing above this layer stores one in clear;
 * `Webhook.secret` of a returned row is the sealed value.
 */
export class WebhookRepository {
  constructor(
    private readonly prisma: PrismaClient | Prisma.TransactionClient,
    private readonly keyring: SecretKeyring,
  ) {}

  /** The database these rows live in, for the audit log's reads (@crm/audit). */
  get db(): PrismaClient | Prisma.TransactionClient {
    return this.prisma;
  }

  /**
   * `work` with a repository on one transaction, and that transaction (for the change's audit entry):
   * all of it commits or none does.
   */
  transaction<T>(work: (repository: WebhookRepository, tx: Prisma.TransactionClient) => Promise<T>): Promise<T> {
    if (!("$transaction" in this.prisma)) throw new Error("already in a transaction");
    return this.prisma.$transaction((tx) => work(new WebhookRepository(tx, this.keyring), tx));
  }

  create(input: NewWebhook): Promise<Webhook> {
    const id = uuidv7();
    return this.prisma.webhook.create({ data: { ...input, id, secret: this.keyring.seal(id, input.secret) } });
  }

  list(businessId: string, page: Pagination): Promise<{ rows: Webhook[]; total: number }> {
    return newestFirstPage(
      page,
      (window) => this.prisma.webhook.findMany({ where: { businessId }, ...window }),
      () => this.prisma.webhook.count({ where: { businessId } }),
    );
  }

  /** Undefined for an unknown id, another business's id, or a string that is not an id at all. */
  async find(businessId: string, id: string): Promise<Webhook | undefined> {
    if (!isUuid(id)) return undefined;
    return (await this.prisma.webhook.findFirst({ where: { id, businessId } })) ?? undefined;
  }

  async update(businessId: string, id: string, changes: WebhookChanges): Promise<Webhook | undefined> {
    if (!isUuid(id)) return undefined;
    // Nothing to set: on PGlite an empty updateMany counts 0 rows, which would read as "not found".
    if (Object.keys(changes).length === 0) return this.find(businessId, id);
    const data = changes.secret === undefined ? changes : { ...changes, secret: this.keyring.seal(id, changes.secret) };
    const { count } = await this.prisma.webhook.updateMany({ where: { id, businessId }, data });
    if (count === 0) return undefined;
    return this.find(businessId, id);
  }

  /**
   * Replaces the signing secret in one statement. With a grace period, the secret it replaces becomes
   * the previous one (its sealed value moves as is: both are bound to this webhook id) until `now` +
   * grace; without, no previous secret is kept. Either way an earlier overlap ends: only the secret
   * rotated away most recently is ever still valid (extensions §E1.1).
   */
  async rotateSecret(businessId: string, id: string, rotation: { secret: string; secretPrefix: string; gracePeriodSeconds: number; now: Date }): Promise<Webhook | undefined> {
    if (!isUuid(id)) return undefined;
    const keep = rotation.gracePeriodSeconds > 0;
    const expiresAt = keep ? new Date(rotation.now.getTime() + rotation.gracePeriodSeconds * 1000) : null;
    // SET expressions read the row as it was, so "previousSecret" gets the secret being replaced.
    const count = await this.prisma.$executeRaw`
      UPDATE ${WEBHOOK} SET
        "previousSecret" = CASE WHEN ${keep} THEN secret ELSE NULL END,
        "previousSecretExpiresAt" = ${expiresAt}::timestamptz,
        secret = ${this.keyring.seal(id, rotation.secret)}, "secretPrefix" = ${rotation.secretPrefix}, "updatedAt" = ${rotation.now}
      WHERE id = ${id}::uuid AND "businessId" = ${businessId}`;
    if (count === 0) return undefined;
    return this.find(businessId, id);
  }
}
