// The audit log (extensions §E7) through the gateway: an entry for each kind of change and auth event,
// with a user's and an API key's actor, written by the service that owns the change; none when the
// change fails; no secret in any entry; a record's history after its delete; the filters and cursor
// paging of GET /audit-log; administrators only; custom field definitions' field.* entries and a
// purge's entries, its client's contacts included.
import { auditLog, createCrmClient } from "@crm/client";
import { ApiClient } from "./api-client";

interface Entry {
  id: string;
  occurredAt: string;
  action: string;
  actor: { type: string; id: string | null; label: string | null };
  target: { type: string; id: string | null };
  changes: Record<string, unknown> | null;
  requestId: string | null;
  ip: string | null;
  userAgent: string | null;
}

const PASSWORD = "correct-horse-battery";
const MEMBER_PASSWORD = "member-password-123";
const NEW_PASSWORD = "another-long-password";

export async function runAuditLogFlow(baseUrl: string, suffix: string): Promise<void> {
  const owner = new ApiClient(baseUrl);
  const { email } = await owner.signUp(`audit-${suffix}`, PASSWORD);
  // An administrator reads the log: the owner's writes and the auditor's reads each have their own rate-limit budget.
  const auditorEmail = `auditor-${suffix}@example.test`;
  expect((await owner.call("POST", "/api/v1/user", { email: auditorEmail, password: PASSWORD, role: "ADMIN" })).status).toBe(201);
  const auditor = new ApiClient(baseUrl);
  auditor.accessToken = (await auditor.call("POST", "/api/v1/auth/sign-in", { email: auditorEmail, password: PASSWORD })).body.data.accessToken;
  const log = async (query = ""): Promise<Entry[]> => {
    const res = await auditor.call("GET", `/api/v1/audit-log?perPage=100${query}`);
    expect(res.status).toBe(200);
    return res.body.data as Entry[];
  };

  // Sign-ins, as a browser would send them: its own user agent and request id.
  const browser = { "user-agent": "audit-e2e-browser/1.0", "x-request-id": `audit-${suffix}-sign-in` };
  const signIn = await owner.call("POST", "/api/v1/auth/sign-in", { email, password: PASSWORD }, browser);
  expect(signIn.status).toBe(200);
  owner.accessToken = signIn.body.data.accessToken;
  const ownerId = signIn.body.data.user.id as string;
  const failed = await owner.call("POST", "/api/v1/auth/sign-in", { email, password: "wrong-password-1" });
  expect(failed.status).toBe(401);
  const [failedEntry, signedIn] = await log("&action=auth.*");
  expect(failedEntry).toMatchObject({ action: "auth.signInFailed", actor: { type: "anonymous", id: null, label: email }, target: { type: "user", id: ownerId }, changes: null });
  expect(signedIn).toMatchObject({
    action: "auth.signedIn",
    actor: { type: "user", id: ownerId, label: email },
    requestId: `audit-${suffix}-sign-in`,
    ip: "127.0.0.1",
    userAgent: "audit-e2e-browser/1.0",
  });
  expect((await log(`&action=user.created&targetId=${ownerId}`))[0]).toMatchObject({ actor: { type: "user", id: ownerId, label: email }, target: { type: "user", id: ownerId } });

  // An API key (its material never in the log), then a record made by the key and changed by the user.
  const created = await owner.call("POST", "/api/v1/api-key", { name: "audit key", scopes: ["clients.read", "clients.create", "clients.update", "clients.delete"] });
  expect(created.status).toBe(201);
  const key = created.body.data.key as string;
  const keyId = created.body.data.id as string;
  const robot = new ApiClient(baseUrl);
  robot.apiKey = key;
  const client = await robot.call("POST", "/api/v1/client", { firstName: "Grace", lastName: "Hopper", email: "grace@example.test" }, { "user-agent": "audit-robot/2" });
  expect(client.status).toBe(201);
  const clientId = client.body.data.id as string;
  const patched = await owner.call("PATCH", `/api/v1/client/${clientId}`, { lastName: "Murray", notes: "met at the conference" });
  expect(patched.status).toBe(200);
  const [update, create] = await log(`&targetType=client&targetId=${clientId}`);
  expect(create).toMatchObject({ action: "client.created", actor: { type: "apiKey", id: keyId, label: "audit key" }, userAgent: "audit-robot/2", changes: client.body.data });
  expect(update).toMatchObject({
    action: "client.updated",
    actor: { type: "user", id: ownerId, label: email },
    changes: { lastName: { from: "Hopper", to: "Murray" }, notes: { from: null, to: "met at the conference" } },
  });
  expect(Object.keys(update!.changes!).sort()).toEqual(["lastName", "notes"]);

  // Changes that fail write nothing: a validation error, a failed precondition, a refused delete (409), a foreign key.
  const before = (await log()).length;
  expect((await owner.call("POST", "/api/v1/client", { firstName: "" })).status).toBe(400);
  expect((await owner.call("PATCH", `/api/v1/client/${clientId}`, { lastName: "X" }, { "if-match": '"stale"' })).status).toBe(412);
  const invoice = await owner.call("POST", "/api/v1/invoice", { clientId, dueDate: "2030-01-01", items: [{ description: "Work", quantity: 1, unitPrice: 10 }] });
  expect(invoice.status).toBe(201);
  const refused = await owner.call("DELETE", `/api/v1/client/${clientId}`);
  expect([refused.status, refused.body.error.code]).toEqual([409, 409003]);
  expect((await owner.call("POST", "/api/v1/contact", { clientId: "0193a4b2-0000-7000-8000-00000000dead", type: "EMAIL", value: "a@example.test" })).status).toBe(400);
  expect((await owner.call("POST", "/api/v1/user", { email, password: MEMBER_PASSWORD })).status).toBe(409);
  expect((await log()).length).toBe(before + 1);
  expect((await log())[0]).toMatchObject({ action: "invoice.created", target: { type: "invoice", id: invoice.body.data.id } });

  // Users: a member created with a password and given a new one; the entry says so without showing either.
  const member = await owner.call("POST", "/api/v1/user", { email: `member-${suffix}@example.test`, password: MEMBER_PASSWORD, role: "MEMBER" });
  expect(member.status).toBe(201);
  const memberId = member.body.data.id as string;
  expect((await owner.call("PATCH", `/api/v1/user/${memberId}`, { password: NEW_PASSWORD, firstName: "Mem" })).status).toBe(200);
  const [memberUpdated, memberCreated] = await log(`&targetId=${memberId}`);
  expect(memberCreated).toMatchObject({ action: "user.created", changes: { email: `member-${suffix}@example.test`, role: "MEMBER" } });
  expect(memberUpdated).toMatchObject({ action: "user.updated", changes: { password: "[REDACTED]", firstName: { from: null, to: "Mem" } } });

  // A webhook and its secret's rotation; a key's change and revocation.
  const webhook = await owner.call("POST", "/api/v1/webhook", { url: "https://user:pass@hooks.example.test/in", events: ["client.created"] });
  expect(webhook.status).toBe(201);
  const rotated = await owner.call("POST", `/api/v1/webhook/${webhook.body.data.id}/rotate-secret`, {});
  expect(rotated.status).toBe(200);
  expect((await owner.call("PUT", `/api/v1/webhook/${webhook.body.data.id}`, { description: "audited" })).status).toBe(200);
  expect((await owner.call("DELETE", `/api/v1/webhook/${webhook.body.data.id}`)).status).toBe(200);
  expect((await log("&action=webhook.*")).map((e) => [e.action, e.changes === null ? null : Object.keys(e.changes).sort()])).toEqual([
    ["webhook.deleted", null],
    ["webhook.updated", ["description"]],
    ["webhook.secretRotated", ["secret", "secretPrefix"]],
    ["webhook.created", expect.arrayContaining(["url", "events", "secretPrefix"])],
  ]);
  expect((await owner.call("PATCH", `/api/v1/api-key/${keyId}`, { name: "audit key v2" })).status).toBe(200);

  // The record's history outlives it (the invoice first, or the client's delete is refused).
  expect((await owner.call("DELETE", `/api/v1/invoice/${invoice.body.data.id}`)).status).toBe(200);
  expect((await robot.call("DELETE", `/api/v1/client/${clientId}`)).status).toBe(200);
  expect((await owner.call("DELETE", `/api/v1/api-key/${keyId}`)).status).toBe(200);
  const history = await auditor.call("GET", `/api/v1/client/${clientId}/history`);
  expect(history.status).toBe(200);
  expect(history.body.data.map((e: Entry) => e.action)).toEqual(["client.deleted", "client.updated", "client.created"]);
  expect(history.body.data[0]).toMatchObject({ actor: { type: "apiKey", id: keyId, label: "audit key v2" }, changes: null });
  const firstPage = await auditor.call("GET", `/api/v1/client/${clientId}/history?perPage=2`);
  expect(firstPage.body.data.map((e: Entry) => e.action)).toEqual(["client.deleted", "client.updated"]);
  const secondPage = await auditor.call("GET", `/api/v1/client/${clientId}/history?perPage=2&cursor=${firstPage.body.meta.nextCursor}`);
  expect([secondPage.body.data.map((e: Entry) => e.action), secondPage.body.meta]).toEqual([["client.created"], { perPage: 2, nextCursor: null }]);
  expect((await auditor.call("GET", `/api/v1/contact/${clientId}/history?cursor=${firstPage.body.meta.nextCursor}`)).body.error.code).toBe(400019);
  expect((await auditor.call("POST", `/api/v1/client/${clientId}/history`, {})).body.error.code).toBe(404000);
  expect((await log("&action=apiKey.*")).map((e) => [e.action, e.changes === null ? null : Object.keys(e.changes).length > 0 ? Object.keys(e.changes).sort() : []])).toEqual([
    ["apiKey.revoked", null],
    ["apiKey.updated", ["name"]],
    ["apiKey.created", expect.arrayContaining(["name", "keyPrefix", "scopes"])],
  ]);

  // Refresh-token reuse and sign-out. The cookie a refresh rotated out, replayed, ends the session.
  const session = new ApiClient(baseUrl);
  expect((await session.call("POST", "/api/v1/auth/sign-in", { email, password: PASSWORD })).status).toBe(200);
  const oldCookie = session.cookie("refreshToken")!;
  const refreshed = await session.call("POST", "/api/v1/auth/token/refresh");
  expect(refreshed.status).toBe(200);
  const reused = await fetch(`${baseUrl}/api/v1/auth/token/refresh`, { method: "POST", headers: { cookie: `refreshToken=${oldCookie}` } });
  expect(reused.status).toBe(401);
  expect((await owner.call("POST", "/api/v1/auth/logout")).status).toBe(204);
  const relogin = new ApiClient(baseUrl);
  const again = await relogin.call("POST", "/api/v1/auth/sign-in", { email, password: PASSWORD });
  owner.accessToken = again.body.data.accessToken;
  const lastAuth = await auditor.call("GET", "/api/v1/audit-log?action=auth.*&perPage=3");
  expect(lastAuth.body.data.map((e: Entry) => e.action)).toEqual(["auth.signedIn", "auth.signedOut", "auth.refreshReused"]);

  // Every kind, and no secret anywhere.
  const everything = await log();
  const kinds = new Set(everything.map((e) => e.action));
  for (const action of [
    "user.created",
    "user.updated",
    "apiKey.created",
    "apiKey.updated",
    "apiKey.revoked",
    "client.created",
    "client.updated",
    "client.deleted",
    "invoice.created",
    "invoice.deleted",
    "webhook.created",
    "webhook.updated",
    "webhook.secretRotated",
    "webhook.deleted",
    "auth.signedIn",
    "auth.signInFailed",
    "auth.signedOut",
    "auth.refreshReused",
  ]) {
    expect([action, kinds.has(action)]).toEqual([action, true]);
  }
  const text = JSON.stringify(everything);
  for (const secret of [PASSWORD, MEMBER_PASSWORD, NEW_PASSWORD, key, webhook.body.data.secret, rotated.body.data.secret, "user:pass", "wrong-password-1"]) {
    expect([secret, text.includes(secret)]).toEqual([secret, false]);
  }

  // Paging, with the typed client: perPage=3 pages walked by cursor give the whole log, newest first, each entry once.
  const walked: Entry[] = [];
  for await (const entry of auditLog(createCrmClient({ baseUrl, accessToken: auditor.accessToken! }), { perPage: 3 })) walked.push(entry as Entry);
  const latest = await log();
  expect(walked.map((e) => e.id)).toEqual(latest.map((e) => e.id));
  const sorted = [...walked].sort((a, b) => (a.occurredAt === b.occurredAt ? (a.id < b.id ? 1 : -1) : a.occurredAt < b.occurredAt ? 1 : -1));
  expect(walked.map((e) => e.id)).toEqual(sorted.map((e) => e.id));

  // Filters: actor, a time window, the cursor's own filters (repeating them is fine, changing them is not).
  expect((await log(`&actorId=${keyId}`)).map((e) => e.action)).toEqual(["client.deleted", "client.created"]);
  const middle = latest[Math.floor(latest.length / 2)]!;
  const window = await log(`&since=${encodeURIComponent(middle.occurredAt)}&until=${encodeURIComponent(latest[0]!.occurredAt)}`);
  expect(window.length).toBeGreaterThan(0);
  expect(window.every((e) => e.occurredAt >= middle.occurredAt && e.occurredAt < latest[0]!.occurredAt)).toBe(true);
  const clientsPage = await auditor.call("GET", "/api/v1/audit-log?action=client.*&perPage=1");
  const next = clientsPage.body.meta.nextCursor as string;
  expect((await auditor.call("GET", `/api/v1/audit-log?action=client.*&perPage=1&cursor=${next}`)).body.data[0].action).toBe("client.updated");
  expect((await auditor.call("GET", `/api/v1/audit-log?action=user.*&cursor=${next}`)).body.error.code).toBe(400001);
  for (const [query, code] of [
    ["cursor=not-a-cursor", 400019],
    ["since=yesterday", 400001],
    ["until=2026-13-45T00:00:00Z", 400001],
    ["action=client.exploded", 400001],
    ["action=nothing.*", 400001],
    ["perPage=101", 400001],
    ["perPage=0", 400001],
    ["limit=5", 400001],
  ] as const) {
    const res = await auditor.call("GET", `/api/v1/audit-log?${query}`);
    expect([query, res.status, res.body.error?.code]).toEqual([query, 400, code]);
  }

  // Administrators only; nothing writes the log.
  const memberClient = new ApiClient(baseUrl);
  const memberSignIn = await memberClient.call("POST", "/api/v1/auth/sign-in", { email: `member-${suffix}@example.test`, password: NEW_PASSWORD });
  memberClient.accessToken = memberSignIn.body.data.accessToken;
  const refusedLog = await memberClient.call("GET", "/api/v1/audit-log");
  expect([refusedLog.status, refusedLog.body.error.code]).toEqual([401, 401014]);
  for (const method of ["POST", "PUT", "PATCH", "DELETE"]) {
    const res = await auditor.call(method, "/api/v1/audit-log", method === "DELETE" ? undefined : {});
    expect([method, res.status, res.body.error.code]).toEqual([method, 404, 404000]);
  }

  // Another business sees none of this.
  const other = new ApiClient(baseUrl);
  await other.signUp(`audit-other-${suffix}`);
  const otherLog = await other.call("GET", "/api/v1/audit-log?perPage=100");
  expect(otherLog.body.data.map((e: Entry) => e.action)).toEqual(["user.created"]);
  expect((await other.call("GET", `/api/v1/client/${clientId}/history`)).body.error.code).toBe(404001);
  expect((await other.call("GET", `/api/v1/audit-log?cursor=${next}`)).body.error.code).toBe(400019);

  // Custom field definitions: one field.* entry per change, target field <entity>.<key>. Entries of one
  // millisecond have no set order, so they are compared sorted.
  expect((await owner.call("POST", "/api/v1/client/fields", { key: "tier", label: "Tier", type: "text" })).status).toBe(201);
  expect((await owner.call("PATCH", "/api/v1/client/fields/tier", { label: "Level" })).status).toBe(200);
  expect((await owner.call("DELETE", "/api/v1/client/fields/tier")).status).toBe(200);
  expect((await owner.call("DELETE", "/api/v1/client/fields/tier?permanent=true")).status).toBe(200);
  const fieldEntries = await log("&action=field.*");
  expect(fieldEntries.every((e) => e.target.type === "field" && e.target.id === "client.tier" && e.actor.id === ownerId)).toBe(true);
  expect(fieldEntries.map((e) => `${e.action} ${e.changes === null ? null : Object.keys(e.changes).sort().join(",")}`).sort()).toEqual(
    [
      "field.created createdAt,defaultValue,description,isArchived,label,options,required,type,unique,updatedAt",
      "field.deleted null",
      "field.updated isArchived",
      "field.updated label",
    ].sort(),
  );
  expect((await log("&targetType=field")).length).toBe(4);

  // A purged client takes its trashed contacts with it: each has its purged entry, and its history stays.
  const doomed = (await owner.call("POST", "/api/v1/client", { firstName: "Doomed", lastName: "Client" })).body.data.id as string;
  const doomedContact = await owner.call("POST", "/api/v1/contact", { clientId: doomed, type: "EMAIL", value: `doomed-${suffix}@example.test` });
  expect(doomedContact.status).toBe(201);
  expect((await owner.call("DELETE", `/api/v1/client/${doomed}`)).status).toBe(200);
  expect((await owner.call("DELETE", `/api/v1/client/${doomed}?permanent=true`)).status).toBe(200);
  const contactHistory = await auditor.call("GET", `/api/v1/contact/${doomedContact.body.data.id}/history`);
  expect(contactHistory.body.data.map((e: Entry) => e.action).sort()).toEqual(["contact.created", "contact.deleted", "contact.purged"]);
  expect(contactHistory.body.data.find((e: Entry) => e.action === "contact.purged")).toMatchObject({ actor: { type: "user", id: ownerId }, changes: null });
  expect((await log(`&action=client.purged&targetId=${doomed}`)).length).toBe(1);
}
