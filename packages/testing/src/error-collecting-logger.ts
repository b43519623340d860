import { Writable } from "node:stream";
import { createLogger, type Logger } from "@crm/logger";

/** A service logger that keeps every error-level line, so a test can assert that none was written. */
export function errorCollectingLogger(service: string): { logger: Logger; errors: string[] } {
  const errors: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = chunk.toString("utf8");
      if (line.includes('"level":50')) errors.push(line);
      done();
    },
  });
  return { logger: createLogger({ service, level: "info", destination }), errors };
}
