import type { Logger } from "@crm/logger";
import type { EventBus, SubscribeOptions } from "./event-bus";
import { InProcessBus } from "./in-process-bus";
import { KafkaBus, type KafkaConsumerSettings } from "./kafka-bus";
import { instrumentBatchHandler, instrumentHandler } from "./consumer-telemetry";

export {
  MessageRejectedError,
  type BatchEventHandler,
  type BusEvent,
  type BusMessage,
  type BusValue,
  type SerializedEnvelope,
  type EventBus,
  type EventContext,
  type EventHandler,
  type Subscription,
  type SubscribeOptions,
} from "./event-bus";
export { instrumentBatchHandler, instrumentHandler } from "./consumer-telemetry";
export { InProcessBus } from "./in-process-bus";
export { KafkaBus, DEFAULT_KAFKA_CONSUMER_SETTINGS, MAX_HANDLED_TOGETHER, type KafkaConsumerSettings } from "./kafka-bus";
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
    const kafka = new KafkaBus({ brokers: options.brokers, clientId: options.clientId, logger: options.logger, consumer: options.consumer });
    return {
      kind: "kafka",
      publish: (topic, messages) => kafka.publish(topic, messages),
      subscribe: (s) => kafka.subscribe(instrumented(options.clientId, s)),
      ping: () => kafka.ping(),
      close: () => kafka.close(),
    };
  }
  if (!processBus) processBus = { bus: new InProcessBus(), users: 0 };
  processBus.users += 1;
  const shared = processBus;
  let closed = false;
  return {
    kind: "in-process",
    publish: (topic, messages) => shared.bus.publish(topic, messages),
    subscribe: (s) => shared.bus.subscribe(instrumented(options.clientId, s)),
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

/** The subscription with its handler counted and traced as `service`'s. */
function instrumented(service: string, s: SubscribeOptions): SubscribeOptions {
  return s.batchHandler ? { ...s, batchHandler: instrumentBatchHandler(service, s.topic, s.batchHandler) } : { ...s, handler: instrumentHandler(service, s.topic, s.handler) };
}
