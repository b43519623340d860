import { uuidv7 } from "@crm/contracts";
import { generateWebhookSecret } from "./secret";
import { keyFromText, OpenedSecrets, SecretKeyring, UnreadableSecretError } from "./secret-keyring";

const keyA = "key-a-0123456789abcdef0123456789abcdef";
const keyB = "key-b-0123456789abcdef0123456789abcdef";

function unreadable(fn: () => unknown): UnreadableSecretError {
  try {
    fn();
  } catch (err) {
    if (err instanceof UnreadableSecretError) return err;
    throw err;
  }
  throw new Error("expected UnreadableSecretError");
}

describe("SecretKeyring", () => {
  const webhookId = uuidv7();
  const secret = generateWebhookSecret();

  it("seals into a versioned value naming the key, holding nothing of the secret", () => {
    const sealed = new SecretKeyring([keyA]).seal(webhookId, secret);
    expect(sealed).toMatch(/^v1:[0-9a-f]{8}:[\w-]{16}:[\w-]+:[\w-]{22}$/);
    expect(sealed.split(":")[1]).toBe(keyFromText(keyA).id);
    expect(sealed).not.toContain("whsec_");
    expect(sealed).not.toContain(secret.slice(6, 20));
    expect(new SecretKeyring([keyA]).seal(webhookId, secret)).not.toBe(sealed); // a fresh IV each time
  });

  it("opens what it sealed, with the current or any older key", () => {
    const oldRing = new SecretKeyring([keyA]);
    const rotated = new SecretKeyring([keyB, keyA]);
    expect(oldRing.open(webhookId, oldRing.seal(webhookId, secret))).toBe(secret);
    expect(rotated.open(webhookId, oldRing.seal(webhookId, secret))).toBe(secret);
    expect(rotated.needsReencryption(oldRing.seal(webhookId, secret))).toBe(true);
    expect(rotated.needsReencryption(rotated.seal(webhookId, secret))).toBe(false);
  });

  it("reads a plaintext secret from before encryption, and wants it re-encrypted", () => {
    const ring = new SecretKeyring([keyA]);
    expect(ring.open(webhookId, secret)).toBe(secret);
    expect(ring.needsReencryption(secret)).toBe(true);
  });

  it("refuses a value sealed with a key it does not have", () => {
    const sealed = new SecretKeyring([keyA]).seal(webhookId, secret);
    const err = unreadable(() => new SecretKeyring([keyB]).open(webhookId, sealed));
    expect(err.reason).toBe("unknown-key");
    expect(err.keyId).toBe(keyFromText(keyA).id);
    expect(err.message).not.toContain(secret);
  });

  it("refuses a value moved onto another webhook", () => {
    const ring = new SecretKeyring([keyA]);
    const sealed = ring.seal(webhookId, secret);
    expect(unreadable(() => ring.open(uuidv7(), sealed)).reason).toBe("tampered");
  });

  it("refuses an altered or malformed value", () => {
    const ring = new SecretKeyring([keyA]);
    const parts = ring.seal(webhookId, secret).split(":");
    const flipped = Buffer.from(parts[3]!, "base64url");
    flipped[0] = flipped[0]! ^ 1;
    expect(unreadable(() => ring.open(webhookId, [parts[0], parts[1], parts[2], flipped.toString("base64url"), parts[4]].join(":"))).reason).toBe("tampered");
    expect(unreadable(() => ring.open(webhookId, "v2:" + parts.slice(1).join(":"))).reason).toBe("malformed");
    expect(unreadable(() => ring.open(webhookId, "garbage")).reason).toBe("malformed");
    expect(unreadable(() => ring.open(webhookId, parts.slice(0, 4).join(":"))).reason).toBe("malformed");
  });

  it("derives a stable key id per key text", () => {
    expect(keyFromText(keyA).id).toBe(keyFromText(keyA).id);
    expect(keyFromText(keyA).id).not.toBe(keyFromText(keyB).id);
    expect(new SecretKeyring([keyB, keyA]).keyIds).toEqual([keyFromText(keyB).id, keyFromText(keyA).id]);
  });
});

// Both ways: WEBHOOK_KEPT_SECRETS=false (a limit of 0) opens at every call (docs/performance.md D28).
describe.each([true, false])("OpenedSecrets (WEBHOOK_KEPT_SECRETS=%s)", (kept) => {
  const keyring = new SecretKeyring([keyA]);
  const counting = () => {
    const calls: string[] = [];
    return { calls, opener: { open: (webhookId: string, stored: string) => (calls.push(webhookId), keyring.open(webhookId, stored)) } };
  };

  it("opens a stored value once (switched off: each time), and a new value (a rotation) again", () => {
    const { calls, opener } = counting();
    const secrets = new OpenedSecrets(opener, kept ? undefined : 0);
    const webhookId = uuidv7();
    const first = generateWebhookSecret();
    const sealed = keyring.seal(webhookId, first);
    expect(secrets.open(webhookId, sealed)).toBe(first);
    expect(secrets.open(webhookId, sealed)).toBe(first);
    expect(calls).toHaveLength(kept ? 1 : 2);
    const rotated = generateWebhookSecret();
    expect(secrets.open(webhookId, keyring.seal(webhookId, rotated))).toBe(rotated);
    expect(calls).toHaveLength(kept ? 2 : 3);
  });

  it("keeps the last `limit` values (switched off: none) and never remembers one it could not open", () => {
    const { calls, opener } = counting();
    const secrets = new OpenedSecrets(opener, kept ? 2 : 0);
    const hooks = [uuidv7(), uuidv7(), uuidv7()];
    const sealed = hooks.map((id) => keyring.seal(id, generateWebhookSecret()));
    hooks.forEach((id, i) => secrets.open(id, sealed[i]!));
    secrets.open(hooks[2]!, sealed[2]!);
    expect(calls).toHaveLength(kept ? 3 : 4);
    secrets.open(hooks[0]!, sealed[0]!); // the oldest went out
    expect(calls).toHaveLength(kept ? 4 : 5);
    // Another webhook's value: refused each time, as the keyring refuses it.
    expect(unreadable(() => secrets.open(hooks[1]!, sealed[0]!)).reason).toBe("tampered");
    expect(unreadable(() => secrets.open(hooks[1]!, sealed[0]!)).reason).toBe("tampered");
    expect(calls).toHaveLength(kept ? 6 : 7);
  });
});
