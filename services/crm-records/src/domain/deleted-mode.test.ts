import { AppError } from "@crm/errors";
import { parseDeletedMode } from "./deleted-mode";

describe("deleted= (extensions §E5)", () => {
  it.each([
    [undefined, "exclude"],
    ["exclude", "exclude"],
    ["include", "include"],
    ["only", "only"],
  ])("%s reads as %s", (raw, mode) => {
    expect(parseDeletedMode(raw)).toBe(mode);
  });

  it.each([[""], ["all"], ["ONLY"], ["true"], [["only", "include"]], [{ only: "" }]])("%j is 400001 at deleted", (raw) => {
    let thrown: unknown;
    try {
      parseDeletedMode(raw);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    expect(thrown).toMatchObject({ code: 400001, details: [{ path: "deleted" }] });
  });
});
