import type { EventEnvelope } from "@crm/contracts";

/**
 * An envelope already serialised, as the outbox keeps it: the bus carries exactly this JSON, so the
 * relay neither parses a row's payload nor serialises it again. `id` and `type` are the envelope's own.
 */
export interface SerializedEnvelope {
  readonly json: string;
  readonly id: string;
  readonly type: string;
}

/** What a message carries: an envelope, or its JSON (see SerializedEnvelope). */
export type BusValue = EventEnvelope | SerializedEnvelope;

/** A message value's JSON: the serialised envelope as it is, or the envelope serialised. */
export function valueJson(value: BusValue): string {
  return "json" in value ? value.json : JSON.stringify(value);
}

export interface BusMessage {
  /** Partition key: the businessId, so events of one business stay in order. */
  key: string;
  value: BusValue;
  /** Message headers besides the envelope: W3C `traceparent` / `tracestate` when the write was traced. */
  headers?: Readonly<Record<string, string>>;
}

/** What a handler learns about a message besides its event. */
export interface EventContext {
  /** The message's string headers (`traceparent` among them when the write was traced). */
  headers: Readonly<Record<string, string>>;
  /**
   * Tracing on, batch handlers only: the W3C headers of this event's consumer span, for the work the
   * event starts (a batch handler runs outside any one event's span).
   */
  trace?: Readonly<Record<string, string>>;
}

/** One event of a batch, with its context. */
export interface BusEvent {
  event: EventEnvelope;
  context: EventContext;
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

export type EventHandler = (event: EventEnvelope, context?: EventContext) => Promise<void>;

/**
 * Handles consecutive events together, in order per partition (on Kafka, what was fetched while the
 * handler's previous call ran, possibly of several partitions; in-process, one publish), so a handler
 * can do one statement for many events. Calls never overlap. Resolves once all are handled; a
 * rejection re-delivers them all (at least once, as for EventHandler).
 */
export type BatchEventHandler = (events: readonly BusEvent[]) => Promise<void>;

export interface Subscription {
  stop(): Promise<void>;
  /**
   * Why this subscription has stopped consuming for good (the consumer crashed and will not restart),
   * or undefined while it is consuming or still joining its group. For readiness checks.
   */
  failure?(): Error | undefined;
}

interface SubscribeCommon {
  topic: string;
  groupId: string;
  /**
   * Resolve `subscribe` once the consumer has joined its group and been given its partitions (the
   * default), or as soon as it is connected and subscribed, the join going on in the background.
   * Nothing is missed either way: consumption starts at the group's committed offsets, or at the
   * beginning of the topic for a new group. The join waits for the broker's rebalance delay
   * (group.initial.rebalance.delay.ms, 3 s by default), which a service need not spend before
   * answering requests.
   */
  waitForJoin?: boolean;
}

/** A subscription's handler: one event at a time (`handler`), or consecutive events together (`batchHandler`). */
export type SubscribeOptions = SubscribeCommon & ({ handler: EventHandler; batchHandler?: undefined } | { batchHandler: BatchEventHandler; handler?: undefined });

/**
 * The port between producers (the outbox relay) and consumers. `publish` resolves only once the
 * messages are durable on the bus (Kafka acks) or handled (in-process), so the relay can mark them sent;
 * it rejects with `MessageRejectedError` when the bus refuses a message for good.
 * Delivery is at least once: handlers must be idempotent on `event.id`.
 */
export interface EventBus {
  readonly kind: "kafka" | "in-process";
  publish(topic: string, messages: readonly BusMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
