import { isAppError } from "@crm/errors";

/**
 * What a call that validates ends in, for table-driven tests: "ok", or the AppError's code and its
 * details' paths. Anything but an AppError is rethrown, so a crash never passes for a refusal.
 */
export function appErrorOutcome(run: () => unknown): "ok" | [number, string[]] {
  try {
    run();
    return "ok";
  } catch (err) {
    if (!isAppError(err)) throw err;
    return [err.code, (err.details ?? []).map((detail) => detail.path)];
  }
}
