import { appErrorOutcome } from "@crm/testing";
import { actionsOf, internalPage, parseAuditFilters, parseAuditPerPage } from "./audit-query";

describe("audit log filters", () => {
  it.each<[Record<string, unknown>, object]>([
    [{}, {}],
    [{ action: "client.created" }, { action: "client.created" }],
    [{ action: "auth.*" }, { action: "auth.*" }],
    [
      { actorId: "k", targetType: "client", targetId: "c" },
      { actorId: "k", targetType: "client", targetId: "c" },
    ],
    [{ since: "2026-01-01" }, { since: "2026-01-01T00:00:00.000Z" }],
    [
      { since: "2026-01-01T10:00:00+02:00", until: "2026-01-02T00:00:00Z" },
      { since: "2026-01-01T08:00:00.000Z", until: "2026-01-02T00:00:00.000Z" },
    ],
  ])("%j -> %j", (query, filters) => {
    expect(parseAuditFilters(query)).toEqual(filters);
  });

  it.each<[Record<string, unknown>, string[]]>([
    [{ action: "client.exploded" }, ["action"]],
    [{ action: "nothing.*" }, ["action"]],
    [{ action: "*" }, ["action"]],
    [{ action: ["a", "b"] }, ["action"]],
    [{ actorId: "" }, ["actorId"]],
    [{ targetId: "x".repeat(201) }, ["targetId"]],
    // PostgreSQL text cannot hold NUL: refused here, not a 503 from the query.
    [{ actorId: "\u0000" }, ["actorId"]],
    [{ targetType: "a\u0000b" }, ["targetType"]],
    [{ targetId: "\u0000" }, ["targetId"]],
    [{ since: "yesterday" }, ["since"]],
    [{ since: "2026-13-45T00:00:00Z" }, ["since"]],
    [{ until: "1700000000" }, ["until"]],
    [{ since: "2026-02-01", until: "2026-01-01" }, ["until"]],
    [{ since: "nope", action: "nope" }, ["action", "since"]],
  ])("%j -> 400001 naming %j", (query, paths) => {
    expect(appErrorOutcome(() => parseAuditFilters(query))).toEqual([400001, paths]);
  });

  it("a group stands for each of its actions", () => {
    expect(actionsOf("auth.*")).toEqual(["auth.signedIn", "auth.signInFailed", "auth.signedOut", "auth.refreshReused"]);
    expect(actionsOf("client.*")).toContain("client.purged");
    expect(actionsOf("client.updated")).toEqual(["client.updated"]);
  });

  it.each<[unknown, number | "error"]>([
    // Interface §8: "perPage default 10" on list endpoints; the audit log and a history are lists too.
    [undefined, 10],
    ["1", 1],
    ["100", 100],
    ["101", "error"],
    ["0", "error"],
    ["-1", "error"],
    ["2.5", "error"],
    [["1", "2"], "error"],
  ])("perPage %j -> %j", (perPage, expected) => {
    if (expected === "error") expect(appErrorOutcome(() => parseAuditPerPage({ perPage }))).toEqual([400001, ["perPage"]]);
    else expect(parseAuditPerPage({ perPage })).toBe(expected);
  });

  it("an internal page's position comes whole or not at all", () => {
    expect(internalPage({ limit: "21" })).toEqual({ limit: 21 });
    expect(internalPage({ limit: "2", afterOccurredAt: "2026-01-01T00:00:00.000Z", afterId: "i" })).toEqual({
      limit: 2,
      after: { occurredAt: "2026-01-01T00:00:00.000Z", id: "i" },
    });
    expect(appErrorOutcome(() => internalPage({ limit: "2", afterId: "i" }))).toEqual([400001, ["afterId"]]);
    expect(appErrorOutcome(() => internalPage({ limit: "500" }))).toEqual([400001, ["limit"]]);
  });
});
