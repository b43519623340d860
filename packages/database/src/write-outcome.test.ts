import { isDependencyUnavailable, isOutcomeInDoubt } from "@crm/errors";
import { outcomeOfTransactionStatus, shortXid } from "./commit-settlement";
import { databaseUnavailable, isCommit, markNeverReached, mayWrite, isTransactionEnd, isTransactionStart, neverReachedServer, outcomeOfLostStatement } from "./write-outcome";

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe("what a lost statement wrote (issue 42)", () => {
  const refused = withCode("connect ECONNREFUSED 127.0.0.1:5432", "ECONNREFUSED");
  const reset = withCode("read ECONNRESET", "ECONNRESET");
  const terminated = new Error("Connection terminated unexpectedly");

  it("a statement that never reached the server wrote nothing; a lost one may have", () => {
    expect(neverReachedServer(refused)).toBe(true);
    expect(neverReachedServer(withCode("the database system is starting up", "57P03"))).toBe(true);
    expect(neverReachedServer(new Error("timeout exceeded when trying to connect"))).toBe(true);
    expect(neverReachedServer(markNeverReached(withCode("read ECONNRESET", "ECONNRESET")))).toBe(true);
    expect(neverReachedServer(new Error("Client has encountered a connection error and is not queryable"))).toBe(true);
    expect(neverReachedServer(reset)).toBe(false);
    expect(neverReachedServer(terminated)).toBe(false);
    expect(neverReachedServer(withCode("terminating connection due to administrator command", "57P01"))).toBe(false);
    expect(neverReachedServer(undefined)).toBe(false);
  });

  it("inside a transaction nothing is written; on its own a write that may have reached the server is in doubt", () => {
    expect(outcomeOfLostStatement({ inTransaction: true, read: false }, reset)).toBe("not-written");
    expect(outcomeOfLostStatement({ inTransaction: false, read: true }, reset)).toBe("not-written");
    expect(outcomeOfLostStatement({ inTransaction: false, read: false }, refused)).toBe("not-written");
    expect(outcomeOfLostStatement({ inTransaction: false, read: false }, reset)).toBe("in-doubt");
    expect(outcomeOfLostStatement({ inTransaction: false, read: false }, terminated)).toBe("in-doubt");
  });

  it("the error says so, as DependencyUnavailableError (503000)", () => {
    const inDoubt = databaseUnavailable(reset, "lost", "in-doubt");
    expect(isDependencyUnavailable(inDoubt)).toBe(true);
    expect(isOutcomeInDoubt(inDoubt)).toBe(true);
    expect(isOutcomeInDoubt(databaseUnavailable(refused, "unreachable", "not-written"))).toBe(false);
  });

  it.each([
    ["COMMIT", true, false, true],
    ["  commit;", true, false, true],
    ["END", true, false, true],
    ["COMMIT WORK", true, false, true],
    ["COMMIT PREPARED 'x'", false, false, false],
    ["BEGIN", false, true, false],
    ["START TRANSACTION ISOLATION LEVEL SERIALIZABLE", false, true, false],
    ["ROLLBACK", false, false, true],
    ["ROLLBACK TO SAVEPOINT s1", false, false, false],
    ["SELECT 1", false, false, false],
    ['INSERT INTO "commit" VALUES (1)', false, false, false],
  ])("%s: commit %s, start %s, end %s", (text, commit, start, end) => {
    expect(isCommit(text)).toBe(commit);
    expect(isTransactionStart(text)).toBe(start);
    expect(isTransactionEnd(text)).toBe(end);
  });
});

it.each([
  ["INSERT INTO t VALUES (1)", true],
  ["UPDATE t SET n = 1", true],
  ["SELECT * FROM t FOR UPDATE", true],
  ["SELECT 1", false],
  ["SET TRANSACTION ISOLATION LEVEL SERIALIZABLE", false],
  ["SAVEPOINT s1", false],
  ["ROLLBACK TO SAVEPOINT s1", false],
  ["BEGIN", false],
])("a transaction sent %s may have written: %s (else its COMMIT asks for no transaction id)", (text, expected) => {
  expect(mayWrite(text)).toBe(expected);
});

describe("a lost COMMIT, as txid_status tells it", () => {
  it("committed and aborted settle it; in progress waits; forgotten cannot be told", () => {
    expect(outcomeOfTransactionStatus("committed")).toBe("committed");
    expect(outcomeOfTransactionStatus("aborted")).toBe("aborted");
    expect(outcomeOfTransactionStatus("in progress")).toBeUndefined();
    expect(outcomeOfTransactionStatus(null)).toBe("unknown");
  });

  it("the 32-bit xid pg_stat_activity shows, from the 64-bit id with its epoch", () => {
    expect(shortXid("748")).toBe("748");
    expect(shortXid(String(2n ** 32n * 3n + 17n))).toBe("17");
  });
});
