import { MessageRejectedError, type BusMessage, type EventBus, type EventHandler, type SubscribeOptions, type Subscription } from "./event-bus";

/** Kafka's default message.max.bytes: single-process mode refuses what a default broker would. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

interface Group {
  groupId: string;
  handlers: EventHandler[];
  next: number;
  /** Serialises deliveries per group, so a group sees one topic's events in publish order. */
  tail: Promise<void>;
}

/**
 * The bus for single-process mode. Publishing hands each message to one handler of every consumer
 * group and resolves when all have handled it; a failing handler fails the publish, so the outbox
 * keeps the event and the relay tries again (at least once, nothing lost). With no consumer group
 * subscribed yet, publish fails for the same reason. A message whose JSON is larger than
 * `maxMessageBytes` is refused for good (`MessageRejectedError`), as a Kafka broker refuses it.
 */
export class InProcessBus implements EventBus {
  readonly kind = "in-process" as const;
  private readonly topics = new Map<string, Map<string, Group>>();
  private readonly maxMessageBytes: number;

  constructor(options: { maxMessageBytes?: number } = {}) {
    this.maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  async publish(topic: string, messages: readonly BusMessage[]): Promise<void> {
    for (const message of messages) {
      const bytes = Buffer.byteLength(JSON.stringify(message.value)) + Buffer.byteLength(message.key);
      if (bytes > this.maxMessageBytes) {
        throw new MessageRejectedError(`message of ${bytes} bytes is larger than the bus accepts (${this.maxMessageBytes})`);
      }
    }
    const groups = [...(this.topics.get(topic)?.values() ?? [])].filter((g) => g.handlers.length > 0);
    if (groups.length === 0) throw new Error(`no consumer subscribed to ${topic}`);
    await Promise.all(groups.map((group) => this.deliver(group, messages)));
  }

  private deliver(group: Group, messages: readonly BusMessage[]): Promise<void> {
    const run = group.tail.then(async () => {
      for (const message of messages) {
        const handler = group.handlers[group.next++ % group.handlers.length]!;
        await handler(structuredClone(message.value), { headers: message.headers ?? NO_HEADERS });
      }
    });
    group.tail = run.catch(() => undefined);
    return run;
  }

  async subscribe({ topic, groupId, handler }: SubscribeOptions): Promise<Subscription> {
    let groups = this.topics.get(topic);
    if (!groups) this.topics.set(topic, (groups = new Map()));
    let group = groups.get(groupId);
    if (!group) groups.set(groupId, (group = { groupId, handlers: [], next: 0, tail: Promise.resolve() }));
    group.handlers.push(handler);
    const owner = group;
    return {
      stop: async () => {
        owner.handlers = owner.handlers.filter((h) => h !== handler);
        await owner.tail;
      },
    };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    for (const groups of this.topics.values()) for (const group of groups.values()) await group.tail;
  }
}
