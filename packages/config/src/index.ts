export { parseEnv, env, ConfigError } from "./env";
export { generatedSecretFiles, loadOrCreateSecret, type GeneratedSecret } from "./secrets";
export { z } from "zod";
