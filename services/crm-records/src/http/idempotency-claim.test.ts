import { DependencyUnavailableError, errors, isOutcomeInDoubt } from "@crm/errors";
import { answeredByClaimOnRetry } from "./idempotency-claim";
import type { CreateClaim } from "../persistence/idempotent-create";

const claim: CreateClaim = { businessId: "b", keyDigest: "k", caller: "c", fingerprint: "f", entity: "client" };
const inDoubt = new DependencyUnavailableError("database", "lost at COMMIT", { outcome: "in-doubt" });
const failing = (err: unknown) => () => Promise.reject(err);

describe("answeredByClaimOnRetry (issue 42)", () => {
  it("a claimed create in doubt is no doubt to the gateway: its retry is answered from the claim", async () => {
    const err = await answeredByClaimOnRetry(claim, failing(inDoubt)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DependencyUnavailableError);
    expect(err).toMatchObject({ outcome: "retry-safe", cause: inDoubt });
    expect(isOutcomeInDoubt(err)).toBe(false);
  });

  it("without a claim the doubt stays; other errors and results pass unchanged", async () => {
    await expect(answeredByClaimOnRetry(undefined, failing(inDoubt))).rejects.toBe(inDoubt);
    const notFound = errors.notFound();
    await expect(answeredByClaimOnRetry(claim, failing(notFound))).rejects.toBe(notFound);
    await expect(answeredByClaimOnRetry(claim, () => Promise.resolve(7))).resolves.toBe(7);
  });
});
