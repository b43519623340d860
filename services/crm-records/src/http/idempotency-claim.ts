// The Idempotency-Key of a create, as the claim its write makes (persistence/idempotent-create.ts).
// The gateway checks the key's shape and keeps answers; this is the last word when it could not.
import { createHash } from "node:crypto";
import type { Request } from "express";
import { DependencyUnavailableError, isOutcomeInDoubt } from "@crm/errors";
import { principalOf } from "@crm/service-kit";
import type { CreateClaim } from "../persistence/idempotent-create";

const digest = (...parts: string[]) => createHash("sha256").update(parts.join("\n")).digest("hex");

/** The claim of a create sent with an Idempotency-Key; undefined without one. */
export function createClaimOf(req: Request, businessId: string, entity: string): CreateClaim | undefined {
  const key = req.get("idempotency-key");
  if (key === undefined) return undefined;
  const { apiKeyId, userId } = principalOf(req);
  return {
    businessId,
    keyDigest: digest(key),
    // As the gateway tells callers apart: the API key a request was made with, else its user.
    caller: apiKeyId ? digest("apiKey", apiKeyId) : digest("user", userId ?? ""),
    fingerprint: digest(req.method, req.originalUrl, JSON.stringify(req.body ?? null)),
    entity,
  };
}

/** Marks an answer replayed from an earlier request, as the gateway marks the answers it keeps. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

/**
 * Runs a create; one sent with a claim whose write is in doubt (the database lost the connection as
 * it committed) is no doubt to the gateway: the claim was part of the same write, so a retry with the
 * key is answered with the records the first run created, or creates them if it did not. The gateway
 * frees the key for that retry (issue 42) rather than refusing it.
 */
export async function answeredByClaimOnRetry<T>(claim: CreateClaim | undefined, create: () => Promise<T>): Promise<T> {
  try {
    return await create();
  } catch (err) {
    if (claim === undefined || !isOutcomeInDoubt(err)) throw err;
    throw new DependencyUnavailableError("database", "a create's outcome is in doubt; its claimed Idempotency-Key answers the retry", { cause: err, outcome: "retry-safe" });
  }
}
