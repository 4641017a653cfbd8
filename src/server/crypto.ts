// Opaque secrets (tokens, codes, client secrets) and their digests. Only digests are stored; lookups are by
// digest (an index, no comparison of the secret itself) and direct comparisons use timingSafeEqual.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** 256 bits of randomness, base64url: 43 characters. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}

export function digest(secret: string): string {
  return createHash("sha256").update(secret, "utf8").digest("hex");
}

/** Constant-time check of a presented secret against a stored digest. */
export function secretMatchesDigest(secret: string, storedDigest: string): boolean {
  const presented = Buffer.from(digest(secret), "hex");
  const stored = Buffer.from(storedDigest, "hex");
  return presented.length === stored.length && timingSafeEqual(presented, stored);
}
