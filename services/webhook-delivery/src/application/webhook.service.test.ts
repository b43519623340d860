import type { Delivery, Webhook } from "../generated/prisma/client";
import type { DeliveryRepository } from "../persistence/delivery.repository";
import type { WebhookRepository } from "../persistence/webhook.repository";
import type { DeliveryScheduler } from "../scheduler/delivery-scheduler";
import { WebhookService } from "./webhook.service";

const webhook = { id: "w", businessId: "b", isActive: true } as Webhook;
const record = (status: Delivery["status"], attempt: number) => ({ id: "d", status, attempt, manualRetry: true }) as Delivery;

/**
 * A manual retry whose record a retry cycle claimed first: sendNow finds nothing to claim and returns
 * at once, while the other claim's attempt is still in flight (the record still RETRYING).
 */
function serviceWhereAnotherClaimSends(reads: Delivery[], manualRetryWaitMs: number) {
  let read = 0;
  const deliveries = {
    requestManualRetry: async () => "accepted" as const,
    find: async () => reads[Math.min(read++, reads.length - 1)],
  };
  const scheduler = { sendNow: async () => undefined };
  const service = new WebhookService({
    webhooks: {} as WebhookRepository,
    deliveries: deliveries as unknown as DeliveryRepository,
    scheduler: scheduler as unknown as DeliveryScheduler,
    manualRetryWaitMs,
  });
  return { service, reads: () => read };
}

describe("WebhookService.retryDelivery", () => {
  it("answers with the manual attempt's outcome when another claim made the attempt", async () => {
    const { service } = serviceWhereAnotherClaimSends([record("RETRYING", 3), record("RETRYING", 3), record("FAILED", 4)], 5_000);
    await expect(service.retryDelivery(webhook, "d")).resolves.toMatchObject({ status: "FAILED", attempt: 4 });
  });

  it("answers with the record as it is once the wait is over", async () => {
    const { service, reads } = serviceWhereAnotherClaimSends([record("RETRYING", 3)], 100);
    await expect(service.retryDelivery(webhook, "d")).resolves.toMatchObject({ status: "RETRYING", attempt: 3 });
    // Bounded: a few reads over the wait, not a busy loop.
    expect(reads()).toBeGreaterThan(1);
    expect(reads()).toBeLessThan(10);
  });
});
