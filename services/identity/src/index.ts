export { start } from "./start";
export { loadConfig, type IdentityConfig } from "./config";
export { createApp, type AppDeps } from "./app";
