// A TCP proxy on loopback in front of a dependency (PostgreSQL, Redis, Kafka), for fault tests: the
// product connects to the proxy, and the test cuts the dependency off (connections dropped, new ones
// refused, as a server that is down), resets the open connections (a failover or network blip as
// clients see it), or slows every byte down. Kafka clients learn broker addresses from the broker,
// so for Kafka the proxy rewrites the broker's own address to its own in the broker's answers.
import net, { type AddressInfo, type Socket } from "node:net";

export interface FaultProxyOptions {
  /** The dependency's address. */
  target: { host: string; port: number };
  /**
   * Kafka: the broker advertises its own address in its answers (metadata, coordinator), and clients
   * connect to what it advertises; answers are rewritten to advertise the proxy instead. Only for a
   * single broker whose advertised host is `target.host` (the mock cluster's).
   */
  kafka?: boolean;
}

/** A client's connection and the proxy's to the dependency; `armedBy`: the `dropAt(…, { after })` trap that may spring on it. */
interface Pair {
  client: Socket;
  upstream: Socket;
  sprung: boolean;
  armedBy?: object;
}

export class FaultProxy {
  private readonly server: net.Server;
  private readonly pairs = new Set<Pair>();
  private delayMs = 0;
  private refusing = false;
  private trap: { matches: (chunk: Buffer) => boolean; after?: (chunk: Buffer) => boolean; deliver: boolean; cutAfter: boolean; sprung: () => void } | undefined;
  /** Connections accepted since start (a test can tell whether clients came back). */
  connections = 0;

  private constructor(
    private readonly options: FaultProxyOptions,
    readonly port: number,
    server: net.Server,
  ) {
    this.server = server;
  }

  /** Starts listening on a free loopback port. */
  static async start(options: FaultProxyOptions): Promise<FaultProxy> {
    const server = net.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolve());
    });
    const proxy = new FaultProxy(options, (server.address() as AddressInfo).port, server);
    server.on("connection", (client) => proxy.accept(client));
    return proxy;
  }

  /** `host:port` of the proxy, for a URL or a broker list. */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Down: every open connection is dropped and new ones are refused, until `restore()`. */
  cut(): void {
    this.refusing = true;
    this.reset();
  }

  /** Up again: new connections reach the dependency. */
  restore(): void {
    this.refusing = false;
  }

  /** Drops every open connection (each side sees a reset); new ones are accepted as before. */
  reset(): void {
    for (const { client, upstream } of this.pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    this.pairs.clear();
  }

  /**
   * The next chunk a client sends that `matches` ends its connection there: the chunk is passed on
   * first (`deliver`: the dependency acts on it, e.g. commits, but its answer never comes back) or
   * not, then the client's side is reset and the dependency's closed. With `cutAfter`, the proxy
   * refuses new connections from then on too (as `cut()`), until `restore()`. With `after`, only on a
   * connection that sent a chunk matching it first (the COMMIT of one transaction among others').
   * Resolves once sprung.
   */
  dropAt(matches: (chunk: Buffer) => boolean, options: { deliver: boolean; cutAfter?: boolean; after?: (chunk: Buffer) => boolean }): Promise<void> {
    return new Promise((resolve) => {
      this.trap = { matches, after: options.after, deliver: options.deliver, cutAfter: options.cutAfter ?? false, sprung: resolve };
    });
  }

  /** Every chunk, either way, is passed on this long after it came (0: at once). */
  slow(delayMs: number): void {
    this.delayMs = delayMs;
  }

  async close(): Promise<void> {
    this.reset();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.refusing) {
      client.resetAndDestroy();
      return;
    }
    this.connections += 1;
    const upstream = net.connect(this.options.target);
    const pair: Pair = { client, upstream, sprung: false };
    this.pairs.add(pair);
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      // A sprung trap closes the dependency's side itself, after the chunk it delivers.
      if (!pair.sprung) upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    this.pipe(client, upstream, (chunk) => this.sprungBy(chunk, pair) ?? chunk);
    const fromBroker = this.options.kafka ? kafkaAnswerRewriter(this.options.target, this.port) : (chunk: Buffer) => chunk;
    this.pipe(upstream, client, fromBroker);
  }

  /** An empty chunk (nothing passed) when `chunk` springs the trap (dropAt), after dealing with the pair. */
  private sprungBy(chunk: Buffer, pair: Pair): Buffer | undefined {
    const trap = this.trap;
    if (!trap) return undefined;
    if (trap.after && pair.armedBy !== trap) {
      if (trap.after(chunk)) pair.armedBy = trap;
      return undefined;
    }
    if (!trap.matches(chunk)) return undefined;
    this.trap = undefined;
    if (trap.cutAfter) this.refusing = true;
    this.pairs.delete(pair);
    pair.sprung = true;
    // The chunk goes out before the close (FIN after the data), so the dependency reads it first.
    if (trap.deliver) pair.upstream.end(chunk);
    else pair.upstream.destroy();
    pair.client.resetAndDestroy();
    trap.sprung();
    return Buffer.alloc(0);
  }

  /** Passes `from`'s bytes to `to`, in order, each chunk after the delay in force when it came. */
  private pipe(from: Socket, to: Socket, transform: (chunk: Buffer) => Buffer): void {
    let last = Promise.resolve();
    from.on("data", (chunk: Buffer) => {
      const out = transform(chunk);
      if (out.length === 0) return;
      const write = () => void (to.destroyed || to.write(out));
      if (this.delayMs === 0) {
        last = last.then(write);
        return;
      }
      const due = Date.now() + this.delayMs;
      last = last.then(() => new Promise<void>((resolve) => setTimeout(() => resolve(write()), due - Date.now())));
    });
  }
}

/**
 * Whether a chunk a PostgreSQL client sent is a COMMIT: a simple Query ('Q') whose text is COMMIT, or
 * an unnamed Parse ('P') of it, as pg (and Prisma's adapter through it) sends one. For `dropAt`.
 */
export function isPostgresCommit(chunk: Buffer): boolean {
  const type = chunk[0];
  if (type === 0x51) return /^commit;?$/i.test(chunk.subarray(5).toString("latin1").replace(/\0$/, "").trim());
  if (type === 0x50) return /^\0commit;?\0/i.test(chunk.subarray(5).toString("latin1"));
  return false;
}

/**
 * Rewrites a broker's answers so it advertises `proxyPort` instead of its own port. Kafka frames an
 * answer as a 4-byte length and the bytes; an address is its host as a string (2-byte length, or a
 * 1-byte varint length + 1 in flexible versions) and a 4-byte port. The host is the same, so only the
 * port's four bytes change and no length does. Frames are buffered until complete, so an address
 * split across chunks is found.
 */
function kafkaAnswerRewriter(target: { host: string; port: number }, proxyPort: number): (chunk: Buffer) => Buffer {
  const host = Buffer.from(target.host);
  const port = (value: number) => {
    const bytes = Buffer.alloc(4);
    bytes.writeInt32BE(value);
    return bytes;
  };
  const patterns = [Buffer.concat([port(host.length).subarray(2), host]), Buffer.concat([Buffer.from([host.length + 1]), host])].map((prefix) => ({
    from: Buffer.concat([prefix, port(target.port)]),
    to: Buffer.concat([prefix, port(proxyPort)]),
  }));
  let pending: Buffer = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let complete = 0;
    while (pending.length - complete >= 4) {
      const size = pending.readInt32BE(complete);
      if (pending.length - complete - 4 < size) break;
      complete += 4 + size;
    }
    const frames = Buffer.from(pending.subarray(0, complete));
    pending = pending.subarray(complete);
    for (const { from, to } of patterns) {
      for (let at = frames.indexOf(from); at !== -1; at = frames.indexOf(from, at + from.length)) to.copy(frames, at);
    }
    return frames;
  };
}
