export { parseEnv, env, ConfigError } from "./env";
export { loadOrCreateSecret } from "./secrets";
export { z } from "zod";
