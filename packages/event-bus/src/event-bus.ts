import type { EventEnvelope } from "@crm/contracts";

export interface BusMessage {
  /** Partition key: the businessId, so events of one business stay in order. */
  key: string;
  value: EventEnvelope;
}

/**
 * The bus refused these messages for good (too large, invalid record): sending them again cannot
 * succeed. Any other publish failure is transient and worth retrying.
 */
export class MessageRejectedError extends Error {
  readonly retriable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "MessageRejectedError";
  }
}

export type EventHandler = (event: EventEnvelope) => Promise<void>;

export interface Subscription {
  stop(): Promise<void>;
}

/**
 * The port between producers (the outbox relay) and consumers. `publish` resolves only once the
 * messages are durable on the bus (Kafka acks) or handled (in-process), so the relay can mark them sent;
 * it rejects with `MessageRejectedError` when the bus refuses a message for good.
 * Delivery is at least once: handlers must be idempotent on `event.id`.
 */
export interface EventBus {
  readonly kind: "kafka" | "in-process";
  publish(topic: string, messages: readonly BusMessage[]): Promise<void>;
  subscribe(options: { topic: string; groupId: string; handler: EventHandler }): Promise<Subscription>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
