// Error codes are data in the catalogue; code names them (`errors.notFound()`, `ErrorCodes.notFound`).
// This keeps a number from creeping back in at a call site, where nothing says what it means.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { AppError, ErrorCodes, errorCatalogue, errorMiddleware, errors, type ErrorCode } from "./index";

const ROOT = join(__dirname, "../../..");
const SKIP = new Set(["node_modules", "generated", "dist", ".git"]);
const NUMBERED = /new\s+AppError\s*\(\s*\d|errorBody\s*\(\s*\d/;
const COMMENT = /^\s*(\/\/|\/?\*)/;

function* sources(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (entry.name.endsWith(".ts")) yield path;
  }
}

describe("error call sites", () => {
  it("name their error instead of spelling its number", () => {
    const offenders: string[] = [];
    for (const top of ["packages", "services", "infra", "e2e", "bench", "scripts"]) {
      for (const file of sources(join(ROOT, top))) {
        readFileSync(file, "utf8")
          .split("\n")
          .forEach((line, i) => {
            if (!COMMENT.test(line) && NUMBERED.test(line)) offenders.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    expect(offenders).toEqual([]);
  });

  it("have one constructor and one named code per catalogue entry", () => {
    const codes = Object.keys(errorCatalogue).map(Number) as ErrorCode[];
    const names = codes.map((code) => errorCatalogue[code].name);
    expect(new Set(names).size).toBe(codes.length);
    for (const code of codes) {
      const { name } = errorCatalogue[code];
      expect(ErrorCodes[name]).toBe(code);
      const error = errors[name]([{ path: "p", message: "m" }], { cause: "c" });
      expect(error).toBeInstanceOf(AppError);
      expect(error).toMatchObject({ code, status: errorCatalogue[code].status, message: errorCatalogue[code].message, details: [{ path: "p", message: "m" }], cause: "c" });
    }
  });
});

describe("errorMiddleware", () => {
  /** What the middleware sets on an answer. */
  function answer(err: unknown) {
    const sent: { status?: number; headers: Record<string, string>; body?: unknown } = { headers: {} };
    const res = {
      headersSent: false,
      setHeader: (name: string, value: string) => void (sent.headers[name.toLowerCase()] = value),
      status(code: number) {
        sent.status = code;
        return this;
      },
      json: (body: unknown) => void (sent.body = body),
    };
    const log = { error: () => undefined, info: () => undefined };
    errorMiddleware(() => log)(err, {} as never, res as never, () => undefined);
    return sent;
  }

  it("says when to try again (Retry-After, whole seconds, at least 1) when the error knows", () => {
    expect(answer(errors.unavailable(undefined, { retryAfterS: 0.2 }))).toEqual({
      status: 503,
      headers: { "retry-after": "1" },
      body: { success: false, error: { code: 503000, message: "Service unavailable" } },
    });
    expect(answer(errors.tooManyRequests(undefined, { retryAfterS: 12.5 })).headers).toEqual({ "retry-after": "13" });
    expect(answer(errors.unavailable()).headers).toEqual({});
  });
});
