export { deriveKey, gcmOpen, gcmSeal, GCM_IV_BYTES, GCM_TAG_BYTES, type GcmSealed } from "./aes-gcm";
