// Request bodies -> column values: what a create or update writes, before any database sees it.
import { CUSTOM_FIELDS_PROPERTY, type RecordItemInput } from "@crm/contracts";
import { errors, isAppError, validationError } from "@crm/errors";
import { parseDate } from "@crm/query-language";
import type { EntityDefinition } from "../entities";
import { formatScaled, ITEM_DECIMALS, toScaled } from "./money";

export type Input = Record<string, unknown>;

/** Body fields -> column values: ISO dates to Date, decimals to exact text, items handled by the caller. */
export function scalarData(definition: EntityDefinition, input: Input): Input {
  const data: Input = {};
  const itemsField = definition.document?.itemsRelation;
  for (const [key, value] of Object.entries(input)) {
    // Custom values are checked against the business's definitions apart (custom-field-values.ts).
    if (key === itemsField || key === CUSTOM_FIELDS_PROPERTY || value === undefined) continue;
    if (definition.dateInputs?.includes(key) && typeof value === "string") {
      const date = parseDate(value);
      if (!date) throw validationError(key, "Expected an ISO 8601 date (YYYY-MM-DD) or date-time");
      data[key] = date;
    } else if (definition.decimalInputs?.includes(key) && typeof value === "number") {
      data[key] = formatScaled(toScaled(value), ITEM_DECIMALS);
    } else {
      data[key] = value;
    }
  }
  return data;
}

/** An invoice's or quote's line items as rows, in the body's order. */
export function itemRows(items: readonly RecordItemInput[]): Input[] {
  return items.map((item, position) => ({
    position,
    description: item.description,
    quantity: formatScaled(toScaled(item.quantity), ITEM_DECIMALS),
    unitPrice: formatScaled(toScaled(item.unitPrice), ITEM_DECIMALS),
  }));
}

/** Runs one batch item's step; its validation details are renamed `items.<i>.<path>`. */
export function itemScoped<T>(index: number, step: () => T): T {
  const rename = (err: unknown): never => {
    if (isAppError(err) && err.details)
      throw errors.validationFailed(
        err.details.map((d) => ({ ...d, path: `items.${index}.${d.path}` })),
        { cause: err },
      );
    throw err;
  };
  try {
    const result = step();
    return (result instanceof Promise ? result.catch(rename) : result) as T;
  } catch (err) {
    return rename(err);
  }
}

/** A client reference that names no client of the caller's business. */
export function unknownClient(): ReturnType<typeof validationError> {
  return validationError("clientId", "Unknown client");
}
