import { env } from "@crm/config";
import { activeTraceLogFields, startTracing } from "@crm/telemetry";

/** Tracing settings every service reads (the gateway too); OpenTelemetry's own variable names. */
export const telemetryConfigFields = {
  /** Base URL of an OTLP/HTTP receiver (a collector); unset: no tracing, and none of its cost. */
  OTEL_EXPORTER_OTLP_ENDPOINT: env.url().optional(),
  /** Longest a finished span waits before it is exported (ms). */
  OTEL_BSP_SCHEDULE_DELAY: env.int(5_000, 1),
};

export interface TelemetryConfig {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_BSP_SCHEDULE_DELAY: number;
}

/**
 * Starts tracing for this process when OTEL_EXPORTER_OTLP_ENDPOINT is set (the first service of a
 * process names it) and returns the logger options that put the active trace id on every line.
 */
export function startServiceTracing(config: TelemetryConfig, serviceName: string): { mixin?: () => Record<string, string> } {
  const on = startTracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName, exportDelayMs: config.OTEL_BSP_SCHEDULE_DELAY });
  return on ? { mixin: activeTraceLogFields } : {};
}
