export { z } from "./zod";
export * from "./permissions";
export * from "./events";
export * from "./principal";
export * from "./ids";
export * from "./envelope";
export * from "./webhooks";
export * from "./records";
export * from "./identity";
