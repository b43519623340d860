// Single-machine mode: all four services in one process, each on its own loopback port, the gateway
// on PORT. With no DATABASE_URL / REDIS_URL / KAFKA_BROKERS they share one embedded PGlite (a schema
// each), one in-process store and one in-process bus. The gateway's forwards call the services' apps
// in the process (no socket); every other HTTP hop is the same as when distributed.
import * as crmRecords from "@crm/crm-records";
import * as gateway from "@crm/gateway";
import * as identity from "@crm/identity";
import * as webhookDelivery from "@crm/webhook-delivery";
import { parseEnv, z } from "@crm/config";
import { startServiceTracing, telemetryConfigFields, type RunningService } from "@crm/service-kit";

export interface Standalone {
  url: string;
  /** The gateway's bound address (`host:port`): loopback unless HOST says otherwise. */
  boundTo: string;
  services: RunningService[];
  stop(): Promise<void>;
}

/** Where the single process's gateway listens when HOST is unset. */
export const EMBEDDED_DEFAULT_HOST = "127.0.0.1";

/** Starts the product from one environment (process.env in production, a test's own in tests). */
export async function startStandalone(env: NodeJS.ProcessEnv): Promise<Standalone> {
  // Internal services listen on ephemeral loopback ports; only the gateway is public.
  const internal = { ...env, PORT: "0", HOST: "127.0.0.1" };
  // One process, one OpenTelemetry resource: its spans name the service in `crm.service`.
  startServiceTracing(parseEnv(z.object(telemetryConfigFields), env), "crm-platform");
  const started: RunningService[] = [];
  try {
    // Sequential: they share one PGlite, and a clear error names the service that failed.
    started.push(await identity.start(identity.loadConfig(internal)));
    started.push(await crmRecords.start(crmRecords.loadConfig(internal)));
    started.push(await webhookDelivery.start(webhookDelivery.loadConfig(internal)));
    const [id, records, webhooks] = started as [RunningService, RunningService, RunningService];
    // The gateway calls the services' apps directly, without loopback HTTP; their listeners stay for
    // health checks, metrics and the calls services make to each other.
    // One machine, one user: the gateway answers this machine only unless HOST opens it wider
    // (the distributed gateway's default, 0.0.0.0, is for a container behind its own network).
    const edge = await gateway.start(
      gateway.loadConfig({ ...env, HOST: env.HOST ?? EMBEDDED_DEFAULT_HOST, IDENTITY_URL: id.url, CRM_RECORDS_URL: records.url, WEBHOOK_DELIVERY_URL: webhooks.url }),
      {
        inProcess: { identity: id.inProcess, "crm-records": records.inProcess, "webhook-delivery": webhooks.inProcess },
      },
    );
    started.push(edge);
    return {
      url: edge.url,
      boundTo: edge.boundTo,
      services: started,
      stop: async () => {
        // The edge first, so no new work arrives while the services flush.
        for (const service of [...started].reverse()) await service.stop();
      },
    };
  } catch (err) {
    for (const service of started.reverse()) await service.stop().catch(() => undefined);
    throw err;
  }
}
