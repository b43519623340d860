// librdkafka's in-memory mock Kafka cluster, started through Debian's `kcat` (apt-get install kcat):
// where neither KAFKA_BROKERS nor Docker is there, the tests and `pnpm start:distributed` run on it.
// Produce, consume and consumer groups work; admin APIs and transactions do not; it keeps nothing
// on disk, so its events end with it.
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

/** Whether `kcat` is on PATH. */
export function hasKcat(): boolean {
  try {
    execFileSync("sh", ["-c", "command -v kcat"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/** librdkafka's in-memory mock cluster: produce, consume and consumer groups work; admin APIs do not. */
export async function startKafkaMock(): Promise<{ brokers: string; process: ChildProcess }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "kafka-mock-"));
  const logFile = path.join(dir, "mock.log");
  const child = spawn("sh", ["-c", `tail -f /dev/null | exec kcat -P -b 127.0.0.1:1 -t _keepalive -X test.mock.num.brokers=1 -d mock 2>"${logFile}"`], {
    stdio: "ignore",
    detached: true,
  });
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 100));
    let text = "";
    try {
      text = readFileSync(logFile, "utf8");
    } catch {
      continue;
    }
    const match = /bootstrap\.servers=([0-9.:,]+)/.exec(text) ?? /Mock cluster .* bootstrap servers? ([0-9.:,]+)/i.exec(text);
    if (match?.[1]) return { brokers: match[1], process: child };
  }
  try {
    process.kill(-child.pid!, "SIGKILL");
  } catch {
    /* already gone */
  }
  throw new Error(`kcat mock cluster did not report its bootstrap servers (see ${logFile})`);
}

/** Ends a mock started by startKafkaMock (its whole process group: the shell, tail and kcat). */
export function stopKafkaMock(mock: { process: ChildProcess }): void {
  try {
    process.kill(-mock.process.pid!, "SIGKILL");
  } catch {
    /* already gone */
  }
}
