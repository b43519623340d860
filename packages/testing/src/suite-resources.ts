/**
 * What a test file opens for all its tests (databases, services, receivers): `open` runs in
 * `beforeAll`, and everything opened, there or later by a test through `track`, is closed in
 * `afterAll`, last opened first, so a service stops before the database it uses is dropped.
 */
export class SuiteResources {
  private readonly closers: Array<() => Promise<void> | void> = [];

  constructor(open: (resources: SuiteResources) => Promise<void>, timeoutMs?: number) {
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
