import { deriveKey, gcmOpen, gcmSeal } from "./aes-gcm";

describe("AES-256-GCM", () => {
  const key = deriveKey("a configured key of at least thirty-two characters", "test aes-256-gcm");

  it("opens what it sealed, under the same key and associated data only", () => {
    const sealed = gcmSeal(key, "the secret", "row 1");
    expect(sealed.iv).toHaveLength(12);
    expect(sealed.tag).toHaveLength(16);
    expect(sealed.ciphertext.toString("utf8")).not.toContain("secret");
    expect(gcmOpen(key, sealed, "row 1")?.toString("utf8")).toBe("the secret");
    expect(gcmOpen(key, sealed, "row 2")).toBeUndefined();
    expect(gcmOpen(deriveKey("another configured key, thirty-two chars or more", "test aes-256-gcm"), sealed, "row 1")).toBeUndefined();
  });

  it("refuses a flipped bit and parts of the wrong size", () => {
    const sealed = gcmSeal(key, Buffer.from("bytes"), Buffer.from("aad"));
    const flipped = Buffer.from(sealed.ciphertext);
    flipped[0] = flipped[0]! ^ 1;
    expect(gcmOpen(key, { ...sealed, ciphertext: flipped }, "aad")).toBeUndefined();
    expect(gcmOpen(key, { ...sealed, tag: sealed.tag.subarray(0, 12) }, "aad")).toBeUndefined();
    expect(gcmOpen(key, { ...sealed, iv: Buffer.alloc(16) }, "aad")).toBeUndefined();
  });

  it("uses a fresh IV for every value", () => {
    expect(gcmSeal(key, "same", "aad").iv.equals(gcmSeal(key, "same", "aad").iv)).toBe(false);
  });

  it("derives the same key from the same text and purpose, another for another purpose", () => {
    expect(deriveKey("text", "a").equals(deriveKey("text", "a"))).toBe(true);
    expect(deriveKey("text", "a").equals(deriveKey("text", "b"))).toBe(false);
    expect(deriveKey(Buffer.from("text", "utf8"), "a").equals(deriveKey("text", "a"))).toBe(true);
  });
});
