import { Kafka, logLevel, type Consumer, type Producer } from "kafkajs";
import { eventEnvelopeSchema } from "@crm/contracts";
import type { Logger } from "@crm/logger";
import type { BusMessage, EventBus, EventHandler, Subscription } from "./event-bus";

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
}

/**
 * Kafka through kafkajs. The producer waits for all in-sync replicas (acks -1) before a publish
 * resolves. Consumers commit an offset only after the handler succeeded, so a crash re-delivers
 * rather than loses; a message that is not a valid envelope is logged and skipped (poison pill).
 */
export class KafkaBus implements EventBus {
  readonly kind = "kafka" as const;
  private readonly kafka: Kafka;
  private producer: Producer | undefined;
  private producerReady: Promise<Producer> | undefined;
  private readonly consumers = new Set<Consumer>();

  constructor(private readonly options: KafkaBusOptions) {
    const log = options.logger.child({ component: "kafka" });
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: logLevel.WARN,
      retry: { retries: 5, initialRetryTime: 200 },
      logCreator: () => (entry) => {
        const { message, ...rest } = entry.log;
        if (entry.level <= logLevel.ERROR) log.error(rest, message);
        else log.warn(rest, message);
      },
    });
  }

  private getProducer(): Promise<Producer> {
    if (!this.producerReady) {
      const producer = this.kafka.producer({ allowAutoTopicCreation: true });
      this.producerReady = producer.connect().then(() => {
        this.producer = producer;
        return producer;
      });
      this.producerReady.catch(() => {
        this.producerReady = undefined;
      });
    }
    return this.producerReady;
  }

  async publish(topic: string, messages: readonly BusMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const producer = await this.getProducer();
    await producer.send({
      topic,
      acks: -1,
      messages: messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value), headers: { "event-type": m.value.type } })),
    });
  }

  async subscribe({ topic, groupId, handler }: { topic: string; groupId: string; handler: EventHandler }): Promise<Subscription> {
    const consumer = this.kafka.consumer({ groupId, allowAutoTopicCreation: true, retry: { retries: 10, initialRetryTime: 300 } });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    this.consumers.add(consumer);
    await consumer.run({
      autoCommit: true,
      eachMessage: async ({ message, partition }) => {
        const parsed = eventEnvelopeSchema.safeParse(safeJson(message.value?.toString("utf8")));
        if (!parsed.success) {
          this.options.logger.error({ topic, partition, offset: message.offset }, "skipping a message that is not an event envelope");
          return;
        }
        await handler(parsed.data);
      },
    });
    return {
      stop: async () => {
        this.consumers.delete(consumer);
        await consumer.disconnect();
      },
    };
  }

  async ping(): Promise<void> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      await admin.describeCluster();
    } finally {
      await admin.disconnect();
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.consumers].map((c) => c.disconnect()));
    this.consumers.clear();
    if (this.producer) await this.producer.disconnect();
  }
}

function safeJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
