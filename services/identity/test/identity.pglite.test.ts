import { identitySuite } from "./identity.suite";

describe("identity on PGlite", () => identitySuite("pglite"));
