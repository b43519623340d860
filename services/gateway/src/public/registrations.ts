import type { OpenAPIRegistry } from "@asteasolutions/zod-to-openapi";

/** Each bounded context describes its own endpoints in @crm/contracts; the gateway serves them all. */
export const openApiRegistrations: Array<(registry: OpenAPIRegistry) => void> = [];
