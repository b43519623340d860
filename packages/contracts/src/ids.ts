import { randomFillSync } from "node:crypto";

// Random bytes are drawn from the CSPRNG 256 ids at a time, as Node's own randomUUID does: one
// randomBytes(16) per id was 1.9 us of CPU, a pooled slice 0.2 us (2 ids per create).
const IDS_PER_FILL = 256;
const randomPool = Buffer.allocUnsafe(16 * IDS_PER_FILL);
let nextId = IDS_PER_FILL;

/** UUID v7 (RFC 9562): time-sortable, so ids created later sort later and index locality is good. */
export function uuidv7(now: number = Date.now()): string {
  if (nextId === IDS_PER_FILL) {
    randomFillSync(randomPool);
    nextId = 0;
  }
  // Each id's 16 bytes are used once: the timestamp and version bits overwrite that slice only.
  const bytes = randomPool.subarray(nextId * 16, ++nextId * 16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function isUuid(value: string): boolean {
  return UUID.test(value);
}
