import { AppError, type AppErrorOptions, type ErrorDetail } from "./app-error";
import { errorCatalogue, type ErrorCode, type ErrorName } from "./catalogue";

/** Builds the AppError of one catalogue entry; `cause` is internal and only ever logged. */
export type ErrorConstructor = (details?: ErrorDetail[], options?: AppErrorOptions) => AppError;

/**
 * One constructor per catalogue entry, named by the catalogue: `throw errors.notFound()`. Derived, so
 * a new code in the catalogue is a new constructor here with nothing else to write.
 */
export const errors = Object.freeze(
  Object.fromEntries(
    (Object.keys(errorCatalogue) as unknown as string[]).map((key) => {
      const code = Number(key) as ErrorCode;
      const create: ErrorConstructor = (details, options) => new AppError(code, details, options);
      return [errorCatalogue[code].name, create];
    }),
  ),
) as { readonly [N in ErrorName]: ErrorConstructor };

/** Shorthand for a single-detail validation failure. */
export function validationError(path: string, message: string): AppError {
  return errors.validationFailed([{ path, message }]);
}
