import { formatScaled, toScaled, totalAmount } from "./money";

describe("toScaled", () => {
  it.each([
    [1, 10000n],
    [0.1, 1000n],
    [1.0049, 10049n],
    ["12.3400", 123400n],
    ["0.00010000", 1n],
    [1e-4, 1n],
    [1.5e3, 15000000n],
    [0, 0n],
  ])("%p -> %p", (input, expected) => {
    expect(toScaled(input)).toBe(expected);
  });

  it("refuses more than 4 decimal places instead of rounding them away", () => {
    expect(() => toScaled(0.00001)).toThrow(RangeError);
    expect(() => toScaled("1.23456")).toThrow(RangeError);
    expect(() => toScaled("abc")).toThrow(RangeError);
  });

  it("formats scaled values back to text", () => {
    expect(formatScaled(1234n, 2)).toBe("12.34");
    expect(formatScaled(5n, 2)).toBe("0.05");
    expect(formatScaled(-5n, 2)).toBe("-0.05");
  });
});

describe("totalAmount (exact, rounded once half-up to 2 decimals)", () => {
  it.each<[string, Array<{ quantity: number; unitPrice: number }>, string]>([
    ["0.005 rounds up", [{ quantity: 1, unitPrice: 0.005 }], "0.01"],
    ["0.0049 rounds down", [{ quantity: 1, unitPrice: 0.0049 }], "0.00"],
    ["1.0049 x 1 rounds down", [{ quantity: 1.0049, unitPrice: 1 }], "1.00"],
    ["1.0049 x 10 = 10.049 -> 10.05", [{ quantity: 1.0049, unitPrice: 10 }], "10.05"],
    ["1.0045 x 1 is 1.0045 -> 1.00", [{ quantity: 1.0045, unitPrice: 1 }], "1.00"],
    ["0.0001 x 0.0001 is far below a cent", [{ quantity: 0.0001, unitPrice: 0.0001 }], "0.00"],
    [
      "0.1 + 0.2 is exactly 0.30",
      [
        { quantity: 1, unitPrice: 0.1 },
        { quantity: 1, unitPrice: 0.2 },
      ],
      "0.30",
    ],
    [
      "rounded once, not per line: 3 x 0.005 = 0.015 -> 0.02",
      [
        { quantity: 1, unitPrice: 0.005 },
        { quantity: 1, unitPrice: 0.005 },
        { quantity: 1, unitPrice: 0.005 },
      ],
      "0.02",
    ],
    [
      "per-line rounding would give 0.03; exact gives 0.02",
      [
        { quantity: 0.5, unitPrice: 0.0125 },
        { quantity: 0.5, unitPrice: 0.0125 },
        { quantity: 1, unitPrice: 0.0025 },
      ],
      "0.02",
    ],
    ["1.005 x 1 -> 1.01 (a float would give 1.00)", [{ quantity: 1, unitPrice: 1.005 }], "1.01"],
    ["large values stay exact", [{ quantity: 99999999999.9999, unitPrice: 99999999999.9999 }], "9999999999999980000000.00"],
    ["zero price", [{ quantity: 3, unitPrice: 0 }], "0.00"],
  ])("%s", (_name, lines, expected) => {
    expect(totalAmount(lines)).toBe(expected);
  });
});
