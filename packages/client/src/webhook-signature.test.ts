import { verifyWebhookSignature } from "./webhook-signature";

const SECRET = "whsec_test_4f3c2a1b";
const BODY = '{"event":"client.created","data":{"id":"c1","firstName":"Zoë"},"businessId":"b1","timestamp":"2026-01-31T12:00:00.000Z"}';
// Pinned vector, computed outside Node with Python:
//   key = hashlib.sha256(SECRET.encode()).hexdigest()
//   hmac.new(key.encode(), BODY.encode("utf-8"), hashlib.sha256).hexdigest()
const PINNED_KEY = "ecbe183fc1cfe27ae86a99319f0c1c684641a15a21a7221e21bce19964267bfb";
const PINNED_SIGNATURE = "c7129b0baf435fab60c76b5763ae6e9dfe09cbc0237305c6674ba5486b9557c1";

const hex = (bytes: ArrayBuffer) => Buffer.from(bytes).toString("hex");

/** Interface §6 a second way, through WebCrypto rather than node:crypto's createHash/createHmac. */
async function webCryptoSignature(secret: string, body: Uint8Array): Promise<string> {
  const { subtle } = globalThis.crypto;
  const keyText = hex(await subtle.digest("SHA-256", new TextEncoder().encode(secret)));
  const key = await subtle.importKey("raw", new TextEncoder().encode(keyText), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return `sha256=${hex(await subtle.sign("HMAC", key, body))}`;
}

describe("verifyWebhookSignature (interface §6)", () => {
  it("agrees with the pinned vector, for the body as a string and as bytes", async () => {
    expect(await webCryptoSignature(SECRET, new TextEncoder().encode(BODY))).toBe(`sha256=${PINNED_SIGNATURE}`);
    const { subtle } = globalThis.crypto;
    expect(hex(await subtle.digest("SHA-256", new TextEncoder().encode(SECRET)))).toBe(PINNED_KEY);
    expect(verifyWebhookSignature(SECRET, BODY, `sha256=${PINNED_SIGNATURE}`)).toBe(true);
    expect(verifyWebhookSignature(SECRET, Buffer.from(BODY, "utf8"), `sha256=${PINNED_SIGNATURE}`)).toBe(true);
    expect(verifyWebhookSignature(SECRET, new TextEncoder().encode(BODY), `sha256=${PINNED_SIGNATURE}`)).toBe(true);
  });

  it("agrees with WebCrypto on arbitrary secrets and bodies, including bytes that are not UTF-8", async () => {
    const bodies = [Buffer.alloc(0), Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from("x".repeat(70_000)), Buffer.from("[1,2,3]\n")];
    for (const [i, body] of bodies.entries()) {
      const secret = `whsec_${i}_${"ü".repeat(i)}`;
      const header = await webCryptoSignature(secret, body);
      expect(verifyWebhookSignature(secret, body, header)).toBe(true);
      expect(verifyWebhookSignature(`${secret}x`, body, header)).toBe(false);
    }
  });

  it("refuses a signature over other bytes: tampering, re-serialised JSON, another secret", () => {
    const header = `sha256=${PINNED_SIGNATURE}`;
    expect(verifyWebhookSignature(SECRET, BODY.replace("c1", "c2"), header)).toBe(false);
    expect(verifyWebhookSignature(SECRET, JSON.stringify(JSON.parse(BODY), null, 2), header)).toBe(false);
    expect(verifyWebhookSignature(SECRET, `${BODY}\n`, header)).toBe(false);
    expect(verifyWebhookSignature("whsec_other", BODY, header)).toBe(false);
    // The key is the hex digest of the secret, not the secret itself.
    expect(verifyWebhookSignature(PINNED_KEY, BODY, header)).toBe(false);
  });

  it.each([
    ["missing", undefined],
    ["null", null],
    ["empty", ""],
    ["without the prefix", PINNED_SIGNATURE],
    ["for another algorithm (sha1=)", `sha1=${PINNED_SIGNATURE}`],
    ["with an uppercase prefix", `SHA256=${PINNED_SIGNATURE}`],
    ["in uppercase hex", `sha256=${PINNED_SIGNATURE.toUpperCase()}`],
    ["truncated", `sha256=${PINNED_SIGNATURE.slice(0, 63)}`],
    ["too long", `sha256=${PINNED_SIGNATURE}00`],
    ["not hexadecimal", `sha256=${"z".repeat(64)}`],
    ["padded with a space", ` sha256=${PINNED_SIGNATURE}`],
    ["repeated (an array)", [`sha256=${PINNED_SIGNATURE}`, `sha256=${PINNED_SIGNATURE}`]],
  ])("returns false when the header is %s", (_name, header) => {
    expect(verifyWebhookSignature(SECRET, BODY, header)).toBe(false);
  });

  it("never throws, whatever it is handed at run time", () => {
    const header = `sha256=${PINNED_SIGNATURE}`;
    const junk: unknown[] = [undefined, null, 42, {}, [], Symbol("s"), () => "x"];
    for (const value of junk) {
      expect(verifyWebhookSignature(value as string, BODY, header)).toBe(false);
      expect(verifyWebhookSignature(SECRET, value as string, header)).toBe(false);
      expect(verifyWebhookSignature(SECRET, BODY, value as string)).toBe(false);
    }
    expect(verifyWebhookSignature("", BODY, header)).toBe(false);
  });
});
