// The id_token signing keys (CONTRACT.md 9; OpenID Connect Core 10.1, RFC 7517, RFC 7638).
//
// RS256 key pairs live in the database, so that every instance signs with the same key. The private JWK is
// stored as a compact JWE (RFC 7516: alg "dir", enc "A256GCM") under a 256-bit key derived from AUTH_SECRET
// with HKDF-SHA256 (RFC 5869); its protected header names the kid, so a ciphertext copied to another row
// does not decrypt as that row's key. jose does every cryptographic step; nothing here is hand-made.
//
// The first key is made at first start (instrumentation.ts) or first use, whichever comes first;
// `generation` is unique, so instances racing to make it end up with exactly one. Rotation adds generation
// n+1, retires the older keys (their private part is erased at once: only the newest key signs) and keeps
// their public keys in the JWKS for a day, so that tokens signed with them (an hour at most) still verify.
import { hkdfSync } from "node:crypto";
import { calculateJwkThumbprint, CompactEncrypt, compactDecrypt, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { now, nowMs } from "@/clock";
import { env } from "@/env";
import { recordEventInTx } from "@/audit/record-event";
import { db, write } from "@/server/db";
import { log } from "@/server/log";

export const SIGNING_ALG = "RS256";
/** How long a retired key's public half stays in the JWKS. */
export const RETIRED_KEY_PUBLISHED_MS = 24 * 3600 * 1000;
/** How long an instance keeps signing with the key it loaded before it looks for a newer one. */
const CURRENT_KEY_CACHE_MS = 60 * 1000;

export class SigningKeyError extends Error {
  override name = "SigningKeyError";
}

export type SigningKey = { kid: string; key: CryptoKey };

let encryptionKeyCache: { secret: string; key: Uint8Array } | null = null;

/** The key that encrypts private keys at rest: HKDF-SHA256 of AUTH_SECRET, bound to this one purpose. */
function encryptionKey(): Uint8Array {
  const secret = env().authSecret;
  if (!encryptionKeyCache || encryptionKeyCache.secret !== secret) {
    encryptionKeyCache = { secret, key: new Uint8Array(hkdfSync("sha256", secret, "", "oidc-signing-key-encryption", 32)) };
  }
  return encryptionKeyCache.key;
}

async function makeKeyMaterial() {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(await exportJWK(privateKey))))
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid, cty: "jwk+json" })
    .encrypt(encryptionKey());
  return { kid, publicJwk: JSON.stringify(publicJwk), privateJwe };
}

async function decryptPrivateKey(kid: string, privateJwe: string): Promise<CryptoKey> {
  let plaintext: Uint8Array;
  try {
    const result = await compactDecrypt(privateJwe, encryptionKey(), { keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"] });
    if (result.protectedHeader.kid !== kid) throw new Error("kid mismatch");
    plaintext = result.plaintext;
  } catch {
    throw new SigningKeyError(
      `signing key ${kid} cannot be decrypted with this AUTH_SECRET (was it changed?); run \`npm run -s cli -- keys:rotate\` to make a new one`,
    );
  }
  return (await importJWK(JSON.parse(new TextDecoder().decode(plaintext)) as JWK, SIGNING_ALG)) as CryptoKey;
}

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === "P2002";

let current: { kid: string; key: CryptoKey; loadedAt: number } | null = null;

/** Makes the first signing key unless there is one; safe when several instances start at once. */
export async function ensureSigningKey(): Promise<void> {
  if (await (await db()).signingKey.findFirst({ select: { id: true } })) return;
  const material = await makeKeyMaterial();
  try {
    await write((tx) => tx.signingKey.create({ data: { ...material, generation: 1, alg: SIGNING_ALG, createdAt: now() } }));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error; // another instance made it first: use theirs
  }
}

/** The key that signs new tokens: the newest one (made if there is none yet), cached for a minute. */
export async function currentSigningKey(): Promise<SigningKey> {
  if (current && nowMs() - current.loadedAt < CURRENT_KEY_CACHE_MS) return current;
  const find = async () =>
    (await db()).signingKey.findFirst({ where: { privateJwe: { not: null } }, orderBy: { generation: "desc" } });
  let row = await find();
  if (!row) {
    await ensureSigningKey();
    row = await find();
  }
  if (!row?.privateJwe) throw new SigningKeyError("no signing key could be made");
  const key = current?.kid === row.kid ? current.key : await decryptPrivateKey(row.kid, row.privateJwe);
  current = { kid: row.kid, key, loadedAt: nowMs() };
  return current;
}

/**
 * Adds a signing key that signs from now on, retires the others (erasing their private part) and records
 * `signing_key.rotated`. Two rotations at once both succeed, one after the other.
 */
export async function rotateSigningKey(options: { ip?: string | null } = {}): Promise<{ kid: string; created_at: string }> {
  const material = await makeKeyMaterial();
  for (let attempt = 0; ; attempt++) {
    const newest = await (await db()).signingKey.findFirst({ orderBy: { generation: "desc" }, select: { generation: true } });
    try {
      const row = await write(async (tx) => {
        const at = now();
        const created = await tx.signingKey.create({
          data: { ...material, generation: (newest?.generation ?? 0) + 1, alg: SIGNING_ALG, createdAt: at },
        });
        await tx.signingKey.updateMany({ where: { id: { not: created.id }, retiredAt: null }, data: { retiredAt: at, privateJwe: null } });
        await recordEventInTx(tx, { type: "signing_key.rotated", ip: options.ip, detail: { kid: created.kid, generation: created.generation } });
        return created;
      });
      current = null;
      return { kid: row.kid, created_at: row.createdAt.toISOString() };
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 4) throw error; // a concurrent rotation took that generation
    }
  }
}

/** The JWKS (RFC 7517 5): the signing key and the keys retired less than a day ago, newest first. */
export async function publishedKeys(): Promise<{ keys: JWK[] }> {
  const since = new Date(nowMs() - RETIRED_KEY_PUBLISHED_MS);
  const rows = await (await db()).signingKey.findMany({
    where: { OR: [{ retiredAt: null }, { retiredAt: { gt: since } }] },
    orderBy: { generation: "desc" },
  });
  return { keys: rows.map((row) => ({ ...(JSON.parse(row.publicJwk) as JWK), kid: row.kid, alg: row.alg, use: "sig" })) };
}

/** Test hook: forget the key this process loaded. */
export function forgetLoadedSigningKey(): void {
  current = null;
}

/** At server start: make the first key now rather than on the first token request; never stops the start. */
export async function ensureSigningKeyAtStart(): Promise<void> {
  try {
    await ensureSigningKey();
  } catch (error) {
    log.error("could not make the first id_token signing key; the first OpenID token request will try again", {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
