// The parts of undici the gateway uses: its connection pool, `request()` on it and its error
// classes. undici's package entry loads all of undici (fetch, WebSocket, caches, proxy and mock
// agents: ~100 modules, ~4-9 MB of a process's RSS); these files load ~30. undici 7 has no
// "exports" map, so these are paths in the package's own layout, pinned by the lockfile; the types
// are the package's public ones.
import type { errors as UndiciErrors, Pool as UndiciPool } from "undici";

/* eslint-disable @typescript-eslint/no-require-imports */
const Dispatcher = require("undici/lib/dispatcher/dispatcher") as { prototype: object };
// What undici's entry does so that every dispatcher has request(), stream(), pipeline(), ...
Object.assign(Dispatcher.prototype, require("undici/lib/api"));
export const Pool = require("undici/lib/dispatcher/pool") as typeof UndiciPool;
export const undiciErrors = require("undici/lib/core/errors") as typeof UndiciErrors;
/** undici's own header parsing (what `request()` answers with), for the forwarder's dispatch handler. */
export const undiciUtil = require("undici/lib/core/util") as { parseHeaders(rawHeaders: Buffer[]): Record<string, string | string[] | undefined> };
/* eslint-enable @typescript-eslint/no-require-imports */
