// Revocation wins every interleaving (issue 16 item 7): a logout or a reuse-revocation racing a
// refresh never leaves an access token of the revoked session on the allow-list, and of two
// concurrent refreshes of one cookie at most one succeeds. Each race runs many times, with the two
// requests started a random number of event-loop turns apart and every store operation delayed by a
// random 0-2 ms (so the interleavings vary), on PGlite with the in-process store and on PostgreSQL
// with the in-process store and with Redis (real concurrency, separate connections).
import { MemoryKvStore, RedisKvStore, type KvStore } from "@crm/kv-store";
import { authKeys } from "@crm/auth-cache";
import { internalCaller, testInfra, uniqueName } from "@crm/testing";
import { FlakyKvStore } from "./flaky-kv-store";
import { cookieValue, openHarness, PASSWORD, refreshCookie, uniqueEmail, type Harness, type Mode } from "./harness";

jest.setTimeout(300_000);

const ITERATIONS = Number(process.env.SESSION_RACE_ITERATIONS ?? 50);
/** Sign-ins in flight at once while the sessions are prepared: under the hasher's queue (16). */
const SIGN_IN_BATCH = 10;

interface Setup {
  name: string;
  mode: Mode;
  kv: () => KvStore;
  available: boolean;
}

const setups: Setup[] = [
  { name: "PGlite + in-process store", mode: "pglite", kv: () => new MemoryKvStore(), available: true },
  { name: "PostgreSQL + in-process store", mode: "postgres", kv: () => new MemoryKvStore(), available: !!testInfra.databaseUrl },
  {
    name: "PostgreSQL + Redis",
    mode: "postgres",
    kv: () => new RedisKvStore(testInfra.redisUrl!, `${uniqueName("session_races")}:`),
    available: !!testInfra.databaseUrl && !!testInfra.redisUrl,
  },
];

/** A few turns of the event loop, so the two racing requests start in varying order and overlap. */
async function jitter(): Promise<void> {
  const turns = Math.floor(Math.random() * 6);
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve));
}

for (const setup of setups) {
  (setup.available ? describe : describe.skip)(`session revocation races on ${setup.name}`, () => {
    let h: Harness;
    let email: string;

    beforeAll(async () => {
      h = await openHarness(setup.mode, {}, { kv: new FlakyKvStore(setup.kv(), 2) });
      email = uniqueEmail("racer");
      const up = await h.pub("/api/v1/auth/sign-up").send({ businessName: "Races", email, password: PASSWORD });
      expect(up.status).toBe(201);
    });
    afterAll(async () => {
      await h?.close();
    });

    async function signIn() {
      const res = await h.pub("/api/v1/auth/sign-in").send({ email, password: PASSWORD });
      expect(res.status).toBe(200);
      const accessToken = res.body.data.accessToken as string;
      return { accessToken, principal: await h.principalOf(accessToken), cookie: cookieValue(refreshCookie(res)) };
    }

    /**
     * One fresh session per run, all signed in before the runs start, a batch at a time (within the
     * password hasher's queue): a sign-in is a commit, and concurrent ones share their fsync, where the
     * runs' own requests must stay one race at a time.
     */
    async function sessionsForRuns() {
      const sessions: Awaited<ReturnType<typeof signIn>>[] = [];
      for (let i = 0; i < ITERATIONS; i += SIGN_IN_BATCH) {
        sessions.push(...(await Promise.all(Array.from({ length: Math.min(SIGN_IN_BATCH, ITERATIONS - i) }, signIn))));
      }
      return sessions;
    }

    const refresh = (cookie: string) => h.pub("/api/v1/auth/token/refresh", { cookie: `refreshToken=${cookie}` });

    /** Nothing of the session still works: no access token is on the allow-list, no refresh cookie rotates. */
    async function expectSessionDead(sessionId: string, accessTokens: string[], cookies: string[], iteration: number) {
      const accepted: string[] = [];
      for (const token of accessTokens) {
        const principal = await h.principalOf(token).catch(() => undefined);
        if (principal) accepted.push(principal.jti!);
      }
      expect({ iteration, accepted }).toEqual({ iteration, accepted: [] });
      expect({ iteration, live: await h.kv.members(`auth:sat:${sessionId}`) }).toEqual({ iteration, live: [] });
      for (const cookie of cookies) {
        const res = await refresh(cookie);
        expect({ iteration, status: res.status }).toEqual({ iteration, status: 401 });
      }
      const row = await h.prisma.session.findUniqueOrThrow({ where: { id: sessionId } });
      expect({ iteration, revoked: row.revokedAt !== null }).toEqual({ iteration, revoked: true });
    }

    it(`refresh racing logout: the logout wins (${ITERATIONS} runs)`, async () => {
      const sessions = await sessionsForRuns();
      for (let i = 0; i < ITERATIONS; i++) {
        const { accessToken, principal, cookie } = sessions[i]!;
        const [refreshed, logout] = await Promise.all([
          (async () => {
            if (i % 2 === 1) await jitter();
            return refresh(cookie);
          })(),
          (async () => {
            if (i % 2 === 0) await jitter();
            return h.as(principal, "post", "/api/v1/auth/logout");
          })(),
        ]);
        expect(logout.status).toBe(204);
        expect([200, 401]).toContain(refreshed.status);
        const tokens = [accessToken, ...(refreshed.status === 200 ? [refreshed.body.data.accessToken as string] : [])];
        const cookies = refreshed.status === 200 ? [cookieValue(refreshCookie(refreshed))] : [];
        await expectSessionDead(principal.sessionId!, tokens, cookies, i);
      }
    });

    /** A gateway's miss as it asks identity: is this token's session live? */
    const resolve = (accessToken: string) => {
      const { jti, sid, sub, exp } = h.codec.verify(accessToken)!;
      return internalCaller(h.app, undefined)
        .post("/internal/auth/access-tokens/resolve")
        .send({ tokens: [{ jti, sessionId: sid, userId: sub, exp }] });
    };

    it(`a gateway's miss (the store lost the token) racing logout: the logout wins (${ITERATIONS} runs)`, async () => {
      const sessions = await sessionsForRuns();
      for (let i = 0; i < ITERATIONS; i++) {
        const { accessToken, principal } = sessions[i]!;
        await h.kv.del(authKeys.accessToken(principal.jti!), authKeys.sessionAccessTokens(principal.sessionId!));
        const [resolved, logout] = await Promise.all([
          (async () => {
            if (i % 2 === 1) await jitter();
            return resolve(accessToken);
          })(),
          (async () => {
            if (i % 2 === 0) await jitter();
            return h.as(principal, "post", "/api/v1/auth/logout");
          })(),
        ]);
        expect(logout.status).toBe(204);
        expect(resolved.status).toBe(200);
        // Once the logout has answered, the token is refused from the cache, and the database says so too.
        expect({ iteration: i, entry: await h.cache.allowedAccessToken(principal.jti!) }).toEqual({ iteration: i, entry: null });
        expect({ iteration: i, verdicts: (await resolve(accessToken)).body.verdicts }).toEqual({ iteration: i, verdicts: [{ jti: principal.jti, live: false }] });
      }
    });

    it(`two concurrent refreshes of one cookie: at most one succeeds and the session ends (${ITERATIONS} runs)`, async () => {
      const sessions = await sessionsForRuns();
      for (let i = 0; i < ITERATIONS; i++) {
        const { accessToken, principal, cookie } = sessions[i]!;
        const results = await Promise.all([
          refresh(cookie),
          (async () => {
            await jitter();
            return refresh(cookie);
          })(),
        ]);
        const succeeded = results.filter((r) => r.status === 200);
        expect({ iteration: i, atMostOne: succeeded.length <= 1 }).toEqual({ iteration: i, atMostOne: true });
        // The other one presented a token already used: reuse, which ends the session.
        expect(results.map((r) => r.body.error?.code ?? 200)).toContain(401013);
        const tokens = [accessToken, ...succeeded.map((r) => r.body.data.accessToken as string)];
        await expectSessionDead(
          principal.sessionId!,
          tokens,
          succeeded.map((r) => cookieValue(refreshCookie(r))),
          i,
        );
      }
    });
  });
}
