import { Kafka, logLevel, Partitioners, type Consumer, type EachBatchPayload, type IHeaders, type KafkaMessage, type Producer } from "kafkajs";
import { consumerMetrics } from "@crm/telemetry";
import { eventEnvelopeSchema } from "@crm/contracts";
import type { Logger } from "@crm/logger";
import { MessageRejectedError, valueJson, type BusEvent, type BusMessage, type EventBus, type SubscribeOptions, type Subscription } from "./event-bus";
import { HandlingQueue } from "./handling-queue";
import { OffsetCommits } from "./offset-commits";

/**
 * How a consumer waits for and keeps its partitions. Defaults are chosen for delivery latency and
 * quick recovery rather than for the fewest fetch requests; see the webhook-delivery README.
 */
export interface KafkaConsumerSettings {
  /**
   * Longest a fetch waits for data before the broker answers empty (kafkajs `maxWaitTimeInMs`, default
   * there 5,000). A real broker answers as soon as there is data; librdkafka's mock, and brokers under
   * some configurations, answer only when the wait ends, so it bounds the added latency. Lower means
   * more (empty) fetch requests while idle: 100 ms is ten small requests a second per consumer.
   */
  fetchMaxWaitMs: number;
  /** A member that sends no heartbeat for this long is dropped and its partitions reassigned. */
  sessionTimeoutMs: number;
  /** How often a member heartbeats; well under the session time-out (a third or less). */
  heartbeatIntervalMs: number;
  /**
   * A batch consumer commits its handled offsets at most this often while events flow, and this long
   * after the last batch (OffsetCommits). Longer means fewer OffsetCommit requests; what a crash or a
   * rebalance leaves uncommitted, at most this much of the stream, is handled again by the next owner.
   */
  commitIntervalMs: number;
}

export const DEFAULT_KAFKA_CONSUMER_SETTINGS: Readonly<KafkaConsumerSettings> = Object.freeze({
  fetchMaxWaitMs: 100,
  // Kafka's smallest allowed session by default (group.min.session.timeout.ms): a killed member's
  // partitions move to the others (or to its replacement) within about 6 s instead of 30 s.
  sessionTimeoutMs: 6_000,
  heartbeatIntervalMs: 1_000,
  // kafkajs's autoCommit committed after every fetch: one round trip per event at 100 events/s.
  commitIntervalMs: 1_000,
});

/**
 * Longest pause between kafkajs's attempts to reach a broker (its default is 30 s): a broker that comes
 * back is used again within about this long, by the producer (the outbox relay) and by consumers.
 */
const KAFKA_MAX_RETRY_TIME_MS = 1_000;

/**
 * Events handed to a batch handler at once at most, and taken from fetches and not yet handled at
 * most (beyond that, fetching waits): a fetch can hold thousands after a backlog, and one handler
 * call (one statement) for all of them would hold the partition's offsets back meanwhile.
 */
export const MAX_HANDLED_TOGETHER = 100;

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  logger: Logger;
  consumer?: Partial<KafkaConsumerSettings>;
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
      retry: { retries: 5, initialRetryTime: 200, maxRetryTime: KAFKA_MAX_RETRY_TIME_MS },
      logCreator: () => (entry) => {
        const { message, ...rest } = entry.log;
        if (entry.level <= logLevel.ERROR) log.error(rest, message);
        else log.warn(rest, message);
      },
    });
  }

  private getProducer(): Promise<Producer> {
    if (!this.producerReady) {
      // Named although it is KafkaJS 2's default (murmur2, as Java clients place keys): left unnamed,
      // KafkaJS warns on the first publish that its default changed in 2.0.
      const producer = this.kafka.producer({ allowAutoTopicCreation: true, createPartitioner: Partitioners.DefaultPartitioner });
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
    try {
      await producer.send({
        topic,
        acks: -1,
        messages: messages.map((m) => ({ key: m.key, value: valueJson(m.value), headers: { ...m.headers, "event-type": m.value.type } })),
      });
    } catch (err) {
      const rejection = messageRejectionOf(err);
      if (rejection) throw new MessageRejectedError(`Kafka refused the message: ${rejection.type}: ${rejection.message}`, { cause: err });
      throw err;
    }
  }

  async subscribe({ topic, groupId, handler, batchHandler, waitForJoin = true }: SubscribeOptions): Promise<Subscription> {
    const settings = { ...DEFAULT_KAFKA_CONSUMER_SETTINGS, ...definedOnly(this.options.consumer ?? {}) };
    let stopped = false;
    const consumer = this.kafka.consumer({
      groupId,
      allowAutoTopicCreation: true,
      // A consumer stopped while it was still joining must not be brought back by kafkajs's restart.
      retry: { retries: 10, initialRetryTime: 300, maxRetryTime: KAFKA_MAX_RETRY_TIME_MS, restartOnFailure: async () => !stopped },
      maxWaitTimeInMs: settings.fetchMaxWaitMs,
      sessionTimeout: settings.sessionTimeoutMs,
      heartbeatInterval: settings.heartbeatIntervalMs,
    });
    // Lag after each fetched batch, per partition of this consumer, summed per topic (a gauge).
    const lagByPartition = new Map<number, number>();
    const lagGauge = consumerMetrics().lag;
    consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
      if (payload.topic !== topic) return;
      lagByPartition.set(payload.partition, Math.max(0, Number(payload.offsetLag) || 0));
      let total = 0;
      for (const lag of lagByPartition.values()) total += lag;
      lagGauge.labels(topic).set(total);
    });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    this.consumers.add(consumer);
    // kafkajs restarts a consumer after retriable failures by itself; a crash it will not restart
    // from is the end of this subscription, and is reported through failure().
    let failure: Error | undefined;
    consumer.on(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) failure = payload.error;
    });
    // run() resolves once the group is joined (its failures go to the CRASH event, not to this promise).
    const eventOf = (message: KafkaMessage, partition: number): BusEvent | undefined => {
      const parsed = eventEnvelopeSchema.safeParse(safeJson(message.value?.toString("utf8")));
      if (parsed.success) return { event: parsed.data, context: { headers: stringHeaders(message.headers) } };
      this.options.logger.error({ topic, partition, offset: message.offset }, "skipping a message that is not an event envelope");
      return undefined;
    };
    // The payload of the batch handled last: commits go through its consumer group (a restarted
    // consumer has a new one; a commit through the old one is refused and the next one covers it).
    let latest: EachBatchPayload | undefined;
    const commits = new OffsetCommits(
      settings.commitIntervalMs,
      async (partitions) => {
        if (latest) await latest.commitOffsetsIfNecessary({ topics: [{ topic, partitions }] });
      },
      (err) => this.options.logger.warn({ err, topic, groupId }, "committing handled offsets failed; the next commit covers them"),
    );
    // A handler failure is thrown by the next batch kafkajs hands over (after the seek below, the
    // failed events again), so kafkajs's retries and back-off apply as when the handler ran inside it.
    let failed: { err: unknown } | undefined;
    const queue = batchHandler
      ? new HandlingQueue({
          handler: batchHandler,
          maxTogether: MAX_HANDLED_TOGETHER,
          maxWaiting: MAX_HANDLED_TOGETHER,
          onHandled: (partition, nextOffset) => commits.handledUpTo(partition, nextOffset),
          onFailed: (firstUnhandled, err) => {
            failed = { err };
            for (const [partition, offset] of firstUnhandled) {
              try {
                consumer.seek({ topic, partition, offset });
              } catch (seekErr) {
                // Not running any more: a restarted consumer fetches from the committed offsets anyway.
                this.options.logger.warn({ err: seekErr, topic, partition }, "could not fetch a failed batch again at once");
              }
            }
          },
        })
      : undefined;
    const running = queue
      ? consumer.run({
          // Committed by OffsetCommits: at most once per commitIntervalMs, and only what is handled.
          autoCommit: false,
          // kafkajs's resolved offset is where it fetches next: a slice's is resolved once the queue has
          // taken it, so the next fetch goes out while the handler works. A batch left early (stopping,
          // or a seek) is not resolved whole.
          eachBatchAutoResolve: false,
          eachBatch: async (payload) => {
            const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
            latest = payload;
            for (let start = 0; start < batch.messages.length; start += MAX_HANDLED_TOGETHER) {
              if (stopped || !isRunning() || isStale()) return;
              if (failed) {
                const { err } = failed;
                failed = undefined;
                throw err;
              }
              const slice = batch.messages.slice(start, start + MAX_HANDLED_TOGETHER);
              const events = slice.map((m) => eventOf(m, batch.partition)).filter((e): e is BusEvent => e !== undefined);
              queue.take({ partition: batch.partition, firstOffset: slice[0]!.offset, lastOffset: slice[slice.length - 1]!.offset, events });
              resolveOffset(slice[slice.length - 1]!.offset);
              await queue.room();
              await heartbeat();
            }
          },
        })
      : consumer.run({
          autoCommit: true,
          eachMessage: async ({ message, partition }) => {
            const event = eventOf(message, partition);
            if (event) await handler!(event.event, event.context);
          },
        });
    if (waitForJoin) await running;
    else running.catch((err: unknown) => (failure = err instanceof Error ? err : new Error(String(err))));
    return {
      stop: async () => {
        stopped = true;
        this.consumers.delete(consumer);
        // Disconnecting in the middle of the join would leave the join running on closed connections;
        // let it finish (the broker's rebalance delay, seconds), but not wait forever on a broker that is gone.
        await Promise.race([running.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, settings.sessionTimeoutMs).unref())]);
        // What was taken is handled (or dropped by a failure), then, still in the group, what was
        // handled is committed, so a successor starts after it.
        await Promise.race([queue?.idle(), new Promise((resolve) => setTimeout(resolve, settings.sessionTimeoutMs).unref())]);
        await commits.stop().catch((err: unknown) => this.options.logger.warn({ err, topic, groupId }, "committing handled offsets at stop failed; they will be handled again"));
        await consumer.disconnect();
      },
      failure: () => failure,
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

function definedOnly<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Broker answers that condemn the messages themselves, never the connection or the cluster:
 * sending them again fails the same way. Other non-retriable answers (authorization, retries
 * exhausted on a broker that is down) are about the setup, so the relay keeps retrying those.
 */
const MESSAGE_REJECTIONS = new Set(["MESSAGE_TOO_LARGE", "RECORD_LIST_TOO_LARGE", "INVALID_RECORD"]);

/** The broker's refusal of the messages, found along kafkajs's chain of wrapped errors. */
export function messageRejectionOf(err: unknown): { type: string; message: string } | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    const e = current as Error & { type?: unknown; retriable?: unknown };
    if (e.name === "KafkaJSProtocolError" && e.retriable === false && typeof e.type === "string" && MESSAGE_REJECTIONS.has(e.type)) {
      return { type: e.type, message: e.message };
    }
    current = e.cause;
  }
  return undefined;
}

/** Kafka header values are bytes (or lists of them); handlers see the first value of each as text. */
function stringHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const [name, value] of Object.entries(headers)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[name] = first.toString();
  }
  return out;
}

function safeJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
