import type { EventEnvelope } from "@crm/contracts";

export interface BusMessage {
  /** Partition key: the businessId, so events of one business stay in order. */
  key: string;
  value: EventEnvelope;
}

export type EventHandler = (event: EventEnvelope) => Promise<void>;

export interface Subscription {
  stop(): Promise<void>;
}

/**
 * The port between producers (the outbox relay) and consumers. `publish` resolves only once the
 * messages are durable on the bus (Kafka acks) or handled (in-process), so the relay can mark them sent.
 * Delivery is at least once: handlers must be idempotent on `event.id`.
 */
export interface EventBus {
  readonly kind: "kafka" | "in-process";
  publish(topic: string, messages: readonly BusMessage[]): Promise<void>;
  subscribe(options: { topic: string; groupId: string; handler: EventHandler }): Promise<Subscription>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
