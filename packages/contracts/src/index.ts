export { z } from "./zod";
export * from "./permissions";
export * from "./events";
export * from "./principal";
export * from "./ids";
export * from "./envelope";
