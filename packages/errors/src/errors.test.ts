// Error codes are data in the catalogue; code names them (`errors.notFound()`, `ErrorCodes.notFound`).
// This keeps a number from creeping back in at a call site, where nothing says what it means.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { AppError, DependencyUnavailableError, ErrorCodes, errorCatalogue, errorMiddleware, errors, isOutcomeInDoubt, OUTCOME_IN_DOUBT_HEADER, type ErrorCode } from "./index";

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
  /** What the middleware sets on an answer, and what it logs at which level. */
  function answer(err: unknown) {
    const sent: { status?: number; headers: Record<string, string>; body?: unknown; logged: Array<{ level: string; obj: object }> } = { headers: {}, logged: [] };
    const res = {
      headersSent: false,
      setHeader: (name: string, value: string) => void (sent.headers[name.toLowerCase()] = value),
      status(code: number) {
        sent.status = code;
        return this;
      },
      json: (body: unknown) => void (sent.body = body),
    };
    const log = {
      error: (obj: object) => void sent.logged.push({ level: "error", obj }),
      warn: (obj: object) => void sent.logged.push({ level: "warn", obj }),
      info: (obj: object) => void sent.logged.push({ level: "info", obj }),
    };
    errorMiddleware(() => log)(err, {} as never, res as never, () => undefined);
    return sent;
  }

  it("says when to try again (Retry-After, whole seconds, at least 1) when the error knows", () => {
    expect(answer(errors.unavailable(undefined, { retryAfterS: 0.2 }))).toMatchObject({
      status: 503,
      headers: { "retry-after": "1" },
      body: { success: false, error: { code: 503000, message: "Service unavailable" } },
    });
    expect(answer(errors.tooManyRequests(undefined, { retryAfterS: 12.5 })).headers).toEqual({ "retry-after": "13" });
    expect(answer(errors.unavailable(undefined, { retryAfterS: 7 })).headers).toEqual({ "retry-after": "7" });
    expect(answer(errors.tooManyRequests()).headers).toEqual({});
  });

  it("answers every 503000 with Retry-After: one second unless the error says (issue 42)", () => {
    expect(answer(errors.unavailable()).headers).toEqual({ "retry-after": "1" });
  });

  it("a dependency that failed is 503000 (never 500000), logged at error level with its cause", () => {
    const cause = new Error("terminating connection due to administrator command");
    const res = answer(new DependencyUnavailableError("database", "the connection was lost", { cause }));
    expect(res).toMatchObject({ status: 503, headers: { "retry-after": "1" }, body: { success: false, error: { code: 503000, message: "Service unavailable" } } });
    expect(res.logged).toEqual([{ level: "error", obj: expect.objectContaining({ dependency: "database" }) }]);
    expect(JSON.stringify(res.body)).not.toContain("terminating");
  });

  it("a write whose outcome is in doubt is 503000 marked for the gateway (OUTCOME_IN_DOUBT_HEADER), also when wrapped; one not written is not marked", () => {
    const inDoubt = new DependencyUnavailableError("database", "lost during COMMIT", { outcome: "in-doubt" });
    expect(answer(inDoubt)).toMatchObject({ status: 503, headers: { "retry-after": "1", [OUTCOME_IN_DOUBT_HEADER]: "1" } });
    expect(answer(errors.unavailable(undefined, { cause: inDoubt })).headers).toEqual({ "retry-after": "1", [OUTCOME_IN_DOUBT_HEADER]: "1" });
    expect(answer(new DependencyUnavailableError("database", "rolled back", { outcome: "not-written" })).headers).toEqual({ "retry-after": "1" });
    expect(answer(new DependencyUnavailableError("database", "unreachable")).headers).toEqual({ "retry-after": "1" });
    expect(isOutcomeInDoubt(new Error("x", { cause: inDoubt }))).toBe(true);
    expect(isOutcomeInDoubt(new Error("x"))).toBe(false);
    // A service that settles the doubt itself says so in an error of its own: the nearest one counts.
    expect(isOutcomeInDoubt(new DependencyUnavailableError("database", "the claim answers a retry", { cause: inDoubt, outcome: "retry-safe" }))).toBe(false);
  });

  it("logs a 5xx the code raised at warn with its cause, a client error at info without one", () => {
    const cause = new Error("connect ECONNREFUSED 127.0.0.1:4001");
    expect(answer(errors.unavailable(undefined, { cause })).logged).toEqual([{ level: "warn", obj: { code: 503000, status: 503, err: cause } }]);
    expect(answer(errors.notFound()).logged).toEqual([{ level: "info", obj: { code: 404001, status: 404 } }]);
  });

  it("anything else unknown is still 500000, without Retry-After", () => {
    const res = answer(new Error("boom"));
    expect(res).toMatchObject({ status: 500, headers: {}, body: { success: false, error: { code: 500000 } } });
  });
});
