export { signInternalToken, verifyInternalToken, type InternalClaims } from "./internal-token";
export { requestContext, REQUEST_ID_HEADER } from "./request-context";
export { requireInternalPrincipal, requireInternalCaller, principalOf, hasPermission, requirePermission } from "./auth";
export { jsonBody, BODY_LIMIT_BYTES } from "./json-body";
export { createServiceApp, readinessHandler, type ServiceAppOptions, type ReadinessCheck } from "./service-app";
export { listen, runProcess, startService, type ListeningServer, type RunningService, type UndoStack } from "./lifecycle";
export { baseConfigFields, serviceConfigFields } from "./config-fields";
export { startPeriodicJob, type PeriodicJob, type PeriodicJobOptions } from "./periodic-job";
export { startRetention, retentionConfigFields, type Retention, type RetentionRule, type RetentionOptions } from "./retention";
