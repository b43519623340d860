export { start } from "./start";
export { loadConfig, type RecordsConfig } from "./config";
export { createApp, type AppDeps } from "./app";
