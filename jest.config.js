// One jest run for the whole workspace. TypeScript is transpiled by swc (types are checked by
// `pnpm typecheck`, not by the test runner, so tests start fast).
/** @type {import('jest').Config} */
// PGlite ships ESM that uses import(); swc turns it into CommonJS so jest runs it without VM modules.
const transform = {
  "^.+\\.ts$": ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "typescript" } }, module: { type: "commonjs" } }],
  "/@electric-sql/pglite/.+\\.(c|m)?js$": ["@swc/jest", { jsc: { target: "es2022", parser: { syntax: "ecmascript" } }, module: { type: "commonjs" } }],
};
module.exports = {
  testEnvironment: "node",
  transform,
  moduleFileExtensions: ["ts", "js", "json"],
  testMatch: ["<rootDir>/packages/*/src/**/*.test.ts", "<rootDir>/services/*/src/**/*.test.ts", "<rootDir>/services/*/test/**/*.test.ts", "<rootDir>/e2e/**/*.test.ts"],
  testPathIgnorePatterns: ["/node_modules/", "/generated/"],
  transformIgnorePatterns: ["^(?!.*/node_modules/@electric-sql/pglite/).*/node_modules/"],
  testTimeout: 30000,
  maxWorkers: 2,
  // A worker leaves no handle open: its 'exit' event fires as soon as jest asks it to end. Node's
  // teardown after that (freeing a heap of 300-400 MB that ran PGlite and Prisma) took 550 ms on a
  // loaded 2-core machine, past jest's default 500 ms, so jest killed it and printed "A worker
  // process has failed to exit gracefully". A leak would still be reported, after this longer wait.
  workerGracefulExitTimeout: 5000,
  globalSetup: "<rootDir>/packages/testing/src/global-setup.ts",
  globalTeardown: "<rootDir>/packages/testing/src/global-teardown.ts",
};
