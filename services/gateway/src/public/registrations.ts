import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { registerIdentityOpenApi, registerRecordsOpenApi, registerWebhooksOpenApi } from "@crm/contracts";

/** Each bounded context describes its own endpoints in @crm/contracts; the gateway serves them all. */
export const openApiRegistrations: Array<(registry: OpenAPIRegistry) => void> = [
  (registry) => registerIdentityOpenApi(registry),
  (registry) => registerRecordsOpenApi(registry),
  (registry) => registerWebhooksOpenApi(registry),
];
