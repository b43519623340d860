// pino with the service name on every line and secrets redacted wherever they might be logged.
import pino, { type Logger } from "pino";

export type { Logger };

/** Paths that may carry credentials; their values never reach a log line. */
const REDACT = [
  "req.headers.authorization",
  "req.headers.cookie",
  'req.headers["x-api-key"]',
  'req.headers["x-internal-token"]',
  'res.headers["set-cookie"]',
  "password",
  "*.password",
  "token",
  "*.token",
  "accessToken",
  "*.accessToken",
  "refreshToken",
  "*.refreshToken",
  "secret",
  "*.secret",
  "key",
  "*.key",
];

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Write somewhere other than stdout (tests capture lines to assert nothing secret is logged). */
  destination?: pino.DestinationStream;
  /** Fields added to every line at the time it is written (the active trace id, when tracing is on). */
  mixin?: () => Record<string, unknown>;
}

export function createLogger({ service, level = "info", destination, mixin }: LoggerOptions): Logger {
  return pino(
    {
      level,
      ...(mixin ? { mixin } : {}),
      base: { service },
      redact: { paths: REDACT, censor: "[redacted]" },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}
