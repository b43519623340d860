// Exact decimal arithmetic for invoice and quote amounts. Values become scaled integers (BigInt),
// so 0.1 + 0.2 is 0.3 and rounding happens exactly once, half-up, at the end (decisions §2, §8).

/** Item quantities and unit prices carry at most this many decimal places. */
export const ITEM_DECIMALS = 4;
const TOTAL_DECIMALS = 2;

const DECIMAL_TEXT = /^(-)?(\d+)(?:\.(\d+))?(?:e([+-]?\d+))?$/i;

/**
 * `value` as an integer count of 10^-decimals. Accepts a JS number (read through its shortest
 * round-trip text, which is what the client wrote) or decimal text (what the database returns).
 * Throws when the value has more decimal places than `decimals`; callers validate first.
 */
export function toScaled(value: number | string, decimals: number = ITEM_DECIMALS): bigint {
  const text = typeof value === "number" ? String(value) : value.trim();
  const match = DECIMAL_TEXT.exec(text);
  if (!match) throw new RangeError(`not a decimal number: ${text}`);
  const [, sign, whole = "0", fraction = "", exponentText = "0"] = match;
  let digits = whole + fraction;
  let scale = fraction.length - Number(exponentText);
  // Normalise to exactly `decimals` places: pad with zeros, or drop trailing zeros only.
  if (scale < 0) {
    digits += "0".repeat(-scale);
    scale = 0;
  }
  while (scale > decimals) {
    if (!digits.endsWith("0")) throw new RangeError(`${text} has more than ${decimals} decimal places`);
    digits = digits.slice(0, -1);
    scale -= 1;
  }
  digits += "0".repeat(decimals - scale);
  const magnitude = BigInt(digits);
  return sign ? -magnitude : magnitude;
}

/** A scaled integer as plain decimal text with exactly `decimals` places (`1234n, 2` -> "12.34"). */
export function formatScaled(value: bigint, decimals: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(decimals + 1, "0");
  const text = decimals === 0 ? digits : `${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
  return negative ? `-${text}` : text;
}

/** Divides by 10^places rounding half away from zero (half-up for the non-negative amounts here). */
function roundHalfUp(value: bigint, places: number): bigint {
  const divisor = 10n ** BigInt(places);
  const negative = value < 0n;
  const magnitude = negative ? -value : value;
  let quotient = magnitude / divisor;
  if ((magnitude % divisor) * 2n >= divisor) quotient += 1n;
  return negative ? -quotient : quotient;
}

export interface AmountLine {
  quantity: number | string;
  unitPrice: number | string;
}

/**
 * Sum of quantity × unitPrice over all lines, computed exactly and rounded once, half-up, to
 * 2 decimals; returned as decimal text ("12.35") for a NUMERIC column.
 */
export function totalAmount(lines: readonly AmountLine[]): string {
  let sum = 0n; // scale 2 * ITEM_DECIMALS
  for (const line of lines) sum += toScaled(line.quantity) * toScaled(line.unitPrice);
  return formatScaled(roundHalfUp(sum, 2 * ITEM_DECIMALS - TOTAL_DECIMALS), TOTAL_DECIMALS);
}

/** Decimal text as a JSON number (amounts are exact in storage, numbers on the wire). */
export function toJsonNumber(text: string): number {
  const n = Number(text);
  return n === 0 ? 0 : n;
}

/** NUMERIC as the database driver returns it (exact text), shaped like Prisma's Decimal for the serializer. */
export class DecimalText {
  constructor(private readonly text: string) {}
  toFixed(): string {
    return this.text;
  }
}
