import type { Logger } from "@crm/logger";
import type { EventBus } from "./event-bus";
import { InProcessBus } from "./in-process-bus";
import { KafkaBus, type KafkaConsumerSettings } from "./kafka-bus";

export { MessageRejectedError, type BusMessage, type EventBus, type EventHandler, type Subscription, type SubscribeOptions } from "./event-bus";
export { InProcessBus } from "./in-process-bus";
export { KafkaBus, DEFAULT_KAFKA_CONSUMER_SETTINGS, type KafkaConsumerSettings } from "./kafka-bus";
export { OutboxRelay, type OutboxRow, type OutboxStore, type OutboxRelayOptions, type OutboxRelayStats } from "./outbox-relay";
export { DEFAULT_MAX_BATCH_BYTES } from "./publish-batches";

let processBus: { bus: InProcessBus; users: number } | undefined;

/**
 * Kafka when brokers are configured; otherwise the one in-process bus of this process, shared by
 * every service running in it (single-process mode only).
 */
export function openEventBus(options: {
  brokers: string[] | undefined;
  clientId: string;
  logger: Logger;
  /** Consumer tuning for Kafka; ignored by the in-process bus. */
  consumer?: Partial<KafkaConsumerSettings>;
}): EventBus {
  if (options.brokers && options.brokers.length > 0) {
    return new KafkaBus({ brokers: options.brokers, clientId: options.clientId, logger: options.logger, consumer: options.consumer });
  }
  if (!processBus) processBus = { bus: new InProcessBus(), users: 0 };
  processBus.users += 1;
  const shared = processBus;
  let closed = false;
  return {
    kind: "in-process",
    publish: (topic, messages) => shared.bus.publish(topic, messages),
    subscribe: (subscription) => shared.bus.subscribe(subscription),
    ping: () => shared.bus.ping(),
    close: async () => {
      if (closed) return;
      closed = true;
      shared.users -= 1;
      if (shared.users === 0 && processBus === shared) processBus = undefined;
      await shared.bus.close();
    },
  };
}
