// Retention of sessions and refresh tokens (issue 16 item 10): a session expired or revoked more than
// SESSION_RETENTION_GRACE_MS ago goes with its refresh tokens, an expired refresh token of a live
// session goes on its own, everything else stays; two runners at once delete each row once.
import { randomBytes } from "node:crypto";
import { uuidv7 } from "@crm/contracts";
import { startRetention } from "@crm/service-kit";
import { databaseModes, errorCollectingLogger } from "@crm/testing";
import type { PrismaClient } from "../src/persistence/prisma";
import { sessionRetentionRules } from "../src/persistence/session-retention";
import { openHarness, type Harness } from "./harness";

const HOUR = 3_600_000;
const GRACE = 24 * HOUR;

const ago = (ms: number) => new Date(Date.now() - ms);
const digest = () => randomBytes(32).toString("hex");

async function newUser(prisma: PrismaClient): Promise<string> {
  const businessId = uuidv7();
  const userId = uuidv7();
  await prisma.business.create({ data: { id: businessId, name: "Retention" } });
  await prisma.user.create({ data: { id: userId, businessId, email: `${userId}@example.com`, emailKey: `${userId}@example.com`, passwordHash: "x", role: "OWNER" } });
  return userId;
}

/** A session with one refresh token per given expiry. */
async function newSession(prisma: PrismaClient, userId: string, session: { expiresAt: Date; revokedAt?: Date }, tokenExpiries: Date[] = [session.expiresAt]) {
  const id = uuidv7();
  const digests = tokenExpiries.map(() => digest());
  await prisma.session.create({
    data: {
      id,
      userId,
      expiresAt: session.expiresAt,
      revokedAt: session.revokedAt ?? null,
      refreshTokens: { create: tokenExpiries.map((expiresAt, i) => ({ digest: digests[i]!, expiresAt })) },
    },
  });
  return { id, digests };
}

describe.each(databaseModes)("session retention on %s", (mode) => {
  jest.setTimeout(60_000);
  let h: Harness;

  beforeAll(async () => {
    h = await openHarness(mode);
  }, 180_000);
  afterAll(async () => {
    await h?.close();
  });

  it("deletes sessions and refresh tokens past expiry or revocation plus the grace, keeps the rest", async () => {
    const userId = await newUser(h.prisma);
    const future = new Date(Date.now() + HOUR);
    const expiredLongAgo = await newSession(h.prisma, userId, { expiresAt: ago(GRACE + HOUR) });
    const revokedLongAgo = await newSession(h.prisma, userId, { expiresAt: future, revokedAt: ago(GRACE + HOUR) });
    const expiredRecently = await newSession(h.prisma, userId, { expiresAt: ago(GRACE - HOUR) });
    const revokedRecently = await newSession(h.prisma, userId, { expiresAt: future, revokedAt: ago(HOUR) });
    // A live session that rotated twice: its first token expired long ago, the others not.
    const live = await newSession(h.prisma, userId, { expiresAt: future }, [ago(GRACE + HOUR), ago(GRACE - HOUR), future]);

    const { logger, errors } = errorCollectingLogger("identity");
    const retention = startRetention({ rules: sessionRetentionRules(h.prisma, GRACE), intervalMs: HOUR, batchSize: 1, logger });
    try {
      // runNow runs both rules at once, so the token rule may reach the long-expired session's token
      // before the session rule's cascade does: 1 or 2 tokens deleted by it, the same rows gone either way.
      const first = await retention.runNow();
      expect(first["sessions"]).toBe(2);
      expect([1, 2]).toContain(first["refresh tokens"]);
      const sessions = await h.prisma.session.findMany({ where: { userId }, select: { id: true } });
      expect(sessions.map((s) => s.id).sort()).toEqual([expiredRecently.id, revokedRecently.id, live.id].sort());
      const tokens = await h.prisma.refreshToken.findMany({ where: { session: { userId } }, select: { digest: true } });
      expect(tokens.map((t) => t.digest).sort()).toEqual([...expiredRecently.digests, ...revokedRecently.digests, ...live.digests.slice(1)].sort());
      expect(await h.prisma.refreshToken.count({ where: { digest: { in: [...expiredLongAgo.digests, ...revokedLongAgo.digests] } } })).toBe(0);
      expect(await retention.runNow()).toEqual({ sessions: 0, "refresh tokens": 0 });
      expect(errors).toEqual([]);
    } finally {
      await retention.stop();
    }
  });

  if (mode === "postgres") {
    it("with two runners at once, deletes each row once without errors", async () => {
      const userId = await newUser(h.prisma);
      const expired = ago(GRACE + HOUR);
      await h.prisma.session.createMany({ data: Array.from({ length: 500 }, () => ({ id: uuidv7(), userId, expiresAt: expired })) });
      const { logger, errors } = errorCollectingLogger("identity");
      const runners = [0, 1].map(() => startRetention({ rules: sessionRetentionRules(h.prisma, GRACE), intervalMs: HOUR, batchSize: 20, logger }));
      try {
        const results = await Promise.all(runners.map((r) => r.runNow()));
        expect(results.reduce((sum, r) => sum + r["sessions"]!, 0)).toBe(500);
        expect(await h.prisma.session.count({ where: { userId } })).toBe(0);
        expect(errors).toEqual([]);
      } finally {
        await Promise.all(runners.map((r) => r.stop()));
      }
    });
  }
});
