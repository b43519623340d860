import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import { registerApiOpenApi } from "@crm/contracts";

/** Every route is declared in @crm/contracts (the gateway's documents too); the gateway serves the document of them all. */
export const openApiRegistrations: Array<(registry: OpenAPIRegistry) => void> = [(registry) => registerApiOpenApi(registry)];
