-- Extensions §E3.2: a key's address allow-list, its own rate limit and the address of its last use.
-- Nullable columns without defaults: a catalogue change only, no table rewrite; the lock wait is bounded
-- so a long transaction on the table makes the deploy fail fast instead of queueing every write behind it.
SET LOCAL lock_timeout = '5s';

-- AlterTable
ALTER TABLE "identity"."ApiKey" ADD COLUMN     "allowedIps" TEXT[],
ADD COLUMN     "lastUsedIp" TEXT,
ADD COLUMN     "rateLimitMax" INTEGER,
ADD COLUMN     "rateLimitWindowSeconds" INTEGER;
