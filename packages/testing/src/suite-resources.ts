/**
 * What a test file opens for all its tests (databases, services, receivers): `open` runs in
 * `beforeAll`, and everything opened, there or later by a test through `track`, is closed in
 * `afterAll`, last opened first, so a service stops before the database it uses is dropped.
 */
/**
 * How long opening a file's fixtures may take: migrating a fresh PGlite database took over jest's
 * default 30 s on a shared 2-core machine (load average 15-20).
 */
export const OPEN_TIMEOUT_MS = 180_000;

export class SuiteResources {
  private readonly closers: Array<() => Promise<void> | void> = [];

  constructor(open: (resources: SuiteResources) => Promise<void>, timeoutMs = OPEN_TIMEOUT_MS) {
    beforeAll(() => open(this), timeoutMs);
    afterAll(() => this.closeAll());
  }

  /** Keeps `value` to be closed with `close` after the file's tests; returns it. */
  track<T>(value: T, close: (value: T) => Promise<void> | void): T {
    this.closers.push(() => close(value));
    return value;
  }

  private async closeAll(): Promise<void> {
    while (this.closers.length > 0) await this.closers.pop()!();
  }
}

/**
 * A fixture every test of the file shares, opened by `open` in `beforeAll` and closed in `afterAll`.
 * The returned object stands for it (members are read from the opened fixture; methods that need
 * `this` are not bound); reading one before `beforeAll` has opened it (a set-up that failed) throws a
 * clear error instead of the TypeError an unset variable would give.
 */
export function sharedFixture<T extends { close(): Promise<void> | void }>(name: string, open: () => Promise<T>, timeoutMs = OPEN_TIMEOUT_MS): T {
  let value: T | undefined;
  beforeAll(async () => {
    value = await open();
  }, timeoutMs);
  afterAll(async () => {
    await value?.close();
  });
  return new Proxy({} as T, {
    get(_target, member) {
      if (value === undefined) throw new Error(`${name} is not open (did its beforeAll fail?)`);
      return Reflect.get(value, member, value);
    },
  });
}
