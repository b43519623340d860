// The gateway's own documents: public, served by the gateway itself, never forwarded.
import { dataEnvelope, errorEnvelopeSchema } from "../envelope";
import { eventTypeSchema } from "../event-types";
import { z } from "../zod";
import { defineRoute } from "./route";

const base = { service: "gateway", public: true } as const;
const tags = ["Meta"];

export const gatewayRoutes = {
  openApi: defineRoute({
    ...base,
    method: "GET",
    path: "/openapi.json",
    docs: () => ({
      summary: "This OpenAPI document",
      tags,
      responses: { 200: { description: "The OpenAPI 3.0.3 document (not enveloped)", content: { "application/json": { schema: z.object({}).passthrough() } } } },
    }),
  }),
  capabilities: defineRoute({
    ...base,
    method: "GET",
    path: "/capabilities",
    docs: () => ({
      summary: "What this deployment offers: entities, events, scopes, filter operators, casts, limits",
      tags,
      responses: {
        200: {
          description: "Capabilities",
          content: { "application/json": { schema: z.object({ success: z.literal(true), data: z.object({}).passthrough() }) } },
        },
      },
    }),
  }),
  eventTypes: defineRoute({
    ...base,
    method: "GET",
    path: "/event-types",
    docs: () => ({
      summary: "The event catalogue: every event with a JSON Schema (draft-07) of its delivery body",
      description:
        "Public, no credentials. The 28 events, each {name, entity, action, description, schema}; every real delivery body validates " +
        "against its schema. Origin: null is refused (403000), as on every endpoint but capabilities.",
      tags,
      responses: {
        200: { description: "The catalogue", content: { "application/json": { schema: dataEnvelope(z.array(eventTypeSchema)) } } },
        403: { description: "403000 Forbidden resource (Origin: null)", content: { "application/json": { schema: errorEnvelopeSchema } } },
      },
    }),
  }),
  /** The API reference page and its assets: HTML, not part of the document. */
  docsPage: defineRoute({ ...base, method: "GET", path: "/docs" }),
  docsAsset: defineRoute({ ...base, method: "GET", path: "/docs/{asset}" }),
};
