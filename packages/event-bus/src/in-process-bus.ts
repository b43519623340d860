import type { EventEnvelope } from "@crm/contracts";
import { MessageRejectedError, valueJson, type BatchEventHandler, type BusMessage, type BusValue, type EventBus, type SubscribeOptions, type Subscription } from "./event-bus";

/** Kafka's default message.max.bytes: single-process mode refuses what a default broker would. */
export const DEFAULT_MAX_MESSAGE_BYTES = 1_048_588;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** A subscriber of a group: a batch handler takes one publish's messages at once, another one message. */
interface Member {
  handle: BatchEventHandler;
  together: boolean;
}

interface Group {
  groupId: string;
  handlers: Member[];
  next: number;
  /** Serialises deliveries per group, so a group sees one topic's events in publish order. */
  tail: Promise<void>;
}

/**
 * The bus for single-process mode. Publishing hands each message to one handler of every consumer
 * group (a batch handler gets all the messages of the publish at once) and resolves when all have
 * handled it; a failing handler fails the publish, so the outbox keeps the event and the relay tries again (at least once, nothing lost). With no consumer group
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
      const bytes = Buffer.byteLength(valueJson(message.value)) + Buffer.byteLength(message.key);
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
      for (let i = 0; i < messages.length; ) {
        const member = group.handlers[group.next++ % group.handlers.length]!;
        const taken = member.together ? messages.slice(i) : [messages[i]!];
        i += taken.length;
        await member.handle(taken.map((message) => ({ event: ownCopy(message.value), context: { headers: message.headers ?? NO_HEADERS } })));
      }
    });
    group.tail = run.catch(() => undefined);
    return run;
  }

  async subscribe({ topic, groupId, handler, batchHandler }: SubscribeOptions): Promise<Subscription> {
    let groups = this.topics.get(topic);
    if (!groups) this.topics.set(topic, (groups = new Map()));
    let group = groups.get(groupId);
    if (!group) groups.set(groupId, (group = { groupId, handlers: [], next: 0, tail: Promise.resolve() }));
    const member: Member = batchHandler
      ? { handle: batchHandler, together: true }
      : {
          handle: async (events) => {
            for (const { event, context } of events) await handler(event, context);
          },
          together: false,
        };
    group.handlers.push(member);
    const owner = group;
    return {
      stop: async () => {
        owner.handlers = owner.handlers.filter((h) => h !== member);
        await owner.tail;
      },
    };
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    for (const groups of this.topics.values()) for (const group of groups.values()) await group.tail;
  }
}

/** Each group's handler gets an envelope of its own, as it would from Kafka: parsed from the JSON, or a clone. */
function ownCopy(value: BusValue): EventEnvelope {
  return "json" in value ? (JSON.parse(value.json) as EventEnvelope) : structuredClone(value);
}
