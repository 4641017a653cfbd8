// The id_token signing keys (OpenID Connect Core 10.1, RFC 7517, RFC 7638;
// docs/rules/openid-connect.md#signing-keys).
//
// RS256 key pairs live in the database, so that every instance signs with the same key. The private JWK is
// stored as a compact JWE (RFC 7516: alg "dir", enc "A256GCM") under a 256-bit key derived from AUTH_SECRET
// with HKDF-SHA256 (RFC 5869). jose does every cryptographic step; nothing here is hand-made.
//
// A ciphertext is bound to its own row: its protected header, which AES-GCM authenticates as additional data
// (RFC 7516 5.1 step 14), names the row's kid and generation (`gen`), both unique, and the decrypted key must
// be the one whose public half the row publishes (its RFC 7638 thumbprint is the kid). A ciphertext copied into
// any other row does not load there: that row signs nothing, it is skipped with an error in the log naming its
// kid, and the newest row whose key does load signs. When none loads (AUTH_SECRET changed), a token request
// that needs an id_token is a 500 that spends no code, and the start logs it. Rows written before the
// header named the generation (they name only the kid) still load, checked the same way otherwise, and are
// re-encrypted in the bound form the first time they load (a conditional update: an instance of the previous
// version still reads the new form, since it checks only the kid). Until then such a ciphertext (or one from a
// backup made before) loads in any row carrying its kid and public key, that is, only as that same key pair.
//
// Rotation and revocation take effect on every instance at once, with no window: before each signature the
// signing path asks the database which row signs now (one statement on the unique index of `generation`,
// the newest row holding a private key), and loads that row's key only when it differs from the one it holds
// (a decryption, once per key and process). So the first id_token signed after `keys:rotate` returns
// carries the new kid on every instance. The JWKS is read from the database on every request and must not be
// cached (Cache-Control: no-store), so a revoked key leaves it at once.
//
// The first key is made at first start (instrumentation.ts) or first use, whichever comes first;
// `generation` is unique, so instances racing to make it end up with exactly one. Rotation adds generation
// n+1, retires the older keys (their private part is erased at once: only the newest key signs) and keeps
// their public keys in the JWKS for a day, so that tokens signed with them (an hour at most) still verify.
// Revocation (a key that leaked) deletes the key's row, rotating first in the same transaction when it was the
// signing key: it leaves the JWKS, so what it signed stops verifying.
import { hkdfSync } from "node:crypto";
import type BetterSqlite3 from "better-sqlite3";
import { calculateJwkThumbprint, CompactEncrypt, compactDecrypt, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { now, nowMs } from "@/clock";
import { env } from "@/env";
import { recordEventInTx } from "@/audit/record-event";
import { notFound } from "@/http/errors";
import { db, driver, write, type Tx } from "@/db/client";
import { log } from "@/observability/log";

export const SIGNING_ALG = "RS256";
/** How long a retired key's public half stays in the JWKS. */
export const RETIRED_KEY_PUBLISHED_MS = 24 * 3600 * 1000;

export class SigningKeyError extends Error {
  override name = "SigningKeyError";
}

export type SigningKey = { kid: string; key: CryptoKey };
type KeyRow = { id: number; kid: string; generation: number; publicJwk: string; privateJwe: string };

let encryptionKeyCache: { secret: string; key: Uint8Array } | null = null;

/** The key that encrypts private keys at rest: HKDF-SHA256 of AUTH_SECRET, bound to this one purpose. */
function encryptionKey(): Uint8Array {
  const secret = env().authSecret;
  if (!encryptionKeyCache || encryptionKeyCache.secret !== secret) {
    encryptionKeyCache = { secret, key: new Uint8Array(hkdfSync("sha256", secret, "", "oidc-signing-key-encryption", 32)) };
  }
  return encryptionKeyCache.key;
}

/** The private JWK encrypted for the row (kid, generation) and no other. */
async function encryptPrivateKey(privateJwk: JWK, kid: string, generation: number): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(privateJwk)))
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid, cty: "jwk+json", gen: generation })
    .encrypt(encryptionKey());
}

async function makeKeyMaterial() {
  const { publicKey, privateKey } = await generateKeyPair(SIGNING_ALG, { modulusLength: 2048, extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const privateJwk = await exportJWK(privateKey);
  return {
    /** The row's columns for generation `generation`: the ciphertext names it. */
    row: async (generation: number) => ({ kid, publicJwk: JSON.stringify(publicJwk), privateJwe: await encryptPrivateKey(privateJwk, kid, generation), generation, alg: SIGNING_ALG }),
  };
}

/**
 * The row's private key, if its ciphertext was made for this very row under this AUTH_SECRET. `legacy` is
 * true for a ciphertext of the earlier form (naming only the kid), which the caller re-encrypts.
 */
async function decryptPrivateKey(row: KeyRow): Promise<{ key: CryptoKey; jwk: JWK; legacy: boolean }> {
  let jwk: JWK;
  let legacy: boolean;
  try {
    const result = await compactDecrypt(row.privateJwe, encryptionKey(), { keyManagementAlgorithms: ["dir"], contentEncryptionAlgorithms: ["A256GCM"] });
    const { kid, gen } = result.protectedHeader as { kid?: unknown; gen?: unknown };
    // Stryker disable next-line StringLiteral: caught just below and replaced by the SigningKeyError that names the row
    if (kid !== row.kid) throw new Error("the ciphertext names another kid");
    legacy = gen === undefined;
    // Stryker disable next-line StringLiteral: caught just below and replaced by the SigningKeyError that names the row
    if (!legacy && gen !== row.generation) throw new Error("the ciphertext names another generation");
    jwk = JSON.parse(new TextDecoder().decode(result.plaintext)) as JWK;
    const published = JSON.parse(row.publicJwk) as JWK;
    if ((await calculateJwkThumbprint(jwk)) !== row.kid || jwk.n !== published.n || jwk.e !== published.e) {
      // Stryker disable next-line StringLiteral: caught just below and replaced by the SigningKeyError that names the row
      throw new Error("the private key is not the one the row publishes");
    }
  } catch {
    throw new SigningKeyError(
      `signing key ${row.kid} (generation ${row.generation}) does not decrypt as its own row's key with this AUTH_SECRET (was AUTH_SECRET changed, or the ciphertext copied from another row?); nothing is signed with it: run \`npm run -s cli -- keys:rotate\` to make a new one`,
    );
  }
  return { key: (await importJWK(jwk, SIGNING_ALG)) as CryptoKey, jwk, legacy };
}

// Stryker disable next-line OptionalChaining: Prisma and jose throw Error objects, never null or undefined
const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === "P2002";

/** The key this process signs with, and the signing row (the database's answer) it was chosen for. */
let loaded: (SigningKey & { head: { id: number; kid: string } }) | null = null;

/** Makes the first signing key unless there is one; safe when several instances start at once. */
export async function ensureSigningKey(): Promise<void> {
  if (await (await db()).signingKey.findFirst({ select: { id: true } })) return;
  const material = await makeKeyMaterial();
  try {
    const data = await material.row(1);
    await write((tx) => tx.signingKey.create({ data: { ...data, createdAt: now() } }));
  } catch (error) {
    if (!isUniqueViolation(error)) throw error; // another instance made it first: use theirs
  }
}

// The row that signs now: the newest holding a private key (rotation erases the others'), found from the top
// of the unique index on generation. On SQLite it runs on the reader connection (src/db/client.ts), which
// sees the last commit of any process and never the inside of a Prisma transaction; on PostgreSQL it is a
// prepared statement on the pool.
const SIGNING_ROW_SQL = 'SELECT "id", "kid" FROM "SigningKey" WHERE "privateJwe" IS NOT NULL ORDER BY "generation" DESC LIMIT 1';
const sqliteStatements = new WeakMap<BetterSqlite3.Database, BetterSqlite3.Statement>();

async function signingRow(): Promise<{ id: number; kid: string } | null> {
  const connection = await driver();
  if (connection.kind === "sqlite") {
    const reader = connection.reader();
    let statement = sqliteStatements.get(reader);
    if (!statement) sqliteStatements.set(reader, (statement = reader.prepare(SIGNING_ROW_SQL)));
    return (statement.get() as { id: number; kid: string } | undefined) ?? null;
  }
  // Stryker disable next-line StringLiteral: the name only lets PostgreSQL keep the statement prepared; unnamed, it is parsed each time and finds the same row
  const { rows } = await connection.pool.query<{ id: number; kid: string }>({ name: "signing-key-current", text: SIGNING_ROW_SQL });
  return rows[0] ?? null;
}

/** Test hook (src/oidc/signing-key-guarantees.int.test.ts): awaited between the look-up of the signing row and
 * the read of the rows it is loaded from, where a rotation or revocation on another instance can land. Unset in
 * production: one property read. */
export const signingKeyHooks: { betweenReads?: () => Promise<void> } = {};

/**
 * The key that signs new tokens. The database's signing row is asked on every call (made if there is none
 * yet); only when it differs from the one this process chose for last time are the rows holding a private key
 * read and decrypted, newest first: a row whose key does not load (a ciphertext not made for it, or another
 * AUTH_SECRET) is skipped with an error in the log, and the next one signs. When none loads, SigningKeyError.
 */
export async function currentSigningKey(): Promise<SigningKey> {
  for (let attempt = 0; ; attempt++) {
    let head = await signingRow();
    if (!head) {
      await ensureSigningKey();
      head = await signingRow();
    }
    // Stryker disable next-line StringLiteral: a SigningKeyError's message goes to the log only (a token request gets server_error); besides, after ensureSigningKey() a row exists, made here or by the instance whose insert won
    if (!head) throw new SigningKeyError("no signing key could be made");
    if (loaded && loaded.head.id === head.id && loaded.head.kid === head.kid) return loaded;
    await signingKeyHooks.betweenReads?.();
    const rows = await (await db()).signingKey.findMany({ where: { privateJwe: { not: null } }, orderBy: { generation: "desc" } });
    if (rows[0]?.id !== head.id || rows[0].kid !== head.kid) {
      if (attempt < 4) continue; // rotated or revoked between the two reads: ask again
      throw new SigningKeyError("the signing key kept changing while it was being loaded");
    }
    let refused: SigningKeyError | null = null;
    for (const row of rows) {
      let decrypted: Awaited<ReturnType<typeof decryptPrivateKey>>;
      try {
        decrypted = await decryptPrivateKey({ ...row, privateJwe: row.privateJwe! });
      } catch (error) {
        if (!(error instanceof SigningKeyError)) throw error;
        log.error("a signing key does not load and is skipped", { kid: row.kid, generation: row.generation, error: error.message });
        refused ??= error;
        continue;
      }
      if (decrypted.legacy) await rebind(row.id, row.kid, row.generation, row.privateJwe!, decrypted.jwk);
      loaded = { kid: row.kid, key: decrypted.key, head };
      return loaded;
    }
    // Stryker disable next-line StringLiteral: a SigningKeyError's message goes to the log only (a token request gets server_error); besides, the rows read start with the signing row, which holds a private key
    throw refused ?? new SigningKeyError("no signing key holds a private key");
  }
}

/** Re-encrypts a ciphertext of the earlier form bound to its row, unless the row changed meanwhile. */
async function rebind(id: number, kid: string, generation: number, previous: string, jwk: JWK): Promise<void> {
  try {
    const privateJwe = await encryptPrivateKey(jwk, kid, generation);
    await write((tx) => tx.signingKey.updateMany({ where: { id, kid, privateJwe: previous }, data: { privateJwe } }));
  } catch (error) {
    log.warn("could not re-encrypt a signing key in the row-bound form; it is tried again on the next load", { kid, error: error instanceof Error ? error.message : String(error) });
  }
}

/** In a transaction: adds the next generation, which signs from now on, and retires every other key. */
async function rotateInTx(tx: Tx, material: Awaited<ReturnType<typeof makeKeyMaterial>>, generation: number, ip: string | null | undefined, reason?: string) {
  const at = now();
  const created = await tx.signingKey.create({ data: { ...(await material.row(generation)), createdAt: at } });
  await tx.signingKey.updateMany({ where: { id: { not: created.id }, retiredAt: null }, data: { retiredAt: at } });
  await tx.signingKey.updateMany({ where: { id: { not: created.id }, privateJwe: { not: null } }, data: { privateJwe: null } });
  await recordEventInTx(tx, { type: "signing_key.rotated", ip, detail: { kid: created.kid, generation: created.generation, ...(reason ? { reason } : {}) } });
  return created;
}

/** The generation after the newest; a concurrent rotation that takes it makes the caller try again. */
async function nextGeneration(): Promise<number> {
  const newest = await (await db()).signingKey.findFirst({ orderBy: { generation: "desc" }, select: { generation: true } });
  return (newest?.generation ?? 0) + 1;
}

/**
 * Adds a signing key that signs from now on, retires the others (erasing their private part) and records
 * `signing_key.rotated`. Two rotations at once both succeed, one after the other.
 */
export async function rotateSigningKey(options: { ip?: string | null } = {}): Promise<{ kid: string; created_at: string }> {
  const material = await makeKeyMaterial();
  for (let attempt = 0; ; attempt++) {
    const generation = await nextGeneration();
    try {
      const row = await write((tx) => rotateInTx(tx, material, generation, options.ip));
      return { kid: row.kid, created_at: row.createdAt.toISOString() };
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= 4) throw error; // a concurrent rotation took that generation
    }
  }
}

/**
 * Withdraws a key (one that leaked): its row is deleted, so it leaves the JWKS at once and what it signed
 * stops verifying. When it is the signing key, a new key is made first, in the same transaction, so that
 * there is always one to sign with. Records `signing_key.revoked` (and `signing_key.rotated`).
 */
export async function revokeSigningKey(
  kid: string,
  options: { ip?: string | null } = {},
): Promise<{ kid: string; revoked_at: string; rotated_to: { kid: string; created_at: string } | null }> {
  const unknown = () => notFound("kid: no such signing key (never made, or already revoked)");
  const target = await (await db()).signingKey.findUnique({ where: { kid }, select: { privateJwe: true } });
  if (!target) throw unknown();
  // Made before the transaction (a key pair takes a moment); used only when the key still signs then.
  const material = target.privateJwe !== null ? await makeKeyMaterial() : null;
  for (let attempt = 0; ; attempt++) {
    const generation = await nextGeneration();
    try {
      return await write(async (tx) => {
        const at = now();
        const row = await tx.signingKey.findUnique({ where: { kid } });
        if (!row) throw unknown();
        let rotated: { kid: string; createdAt: Date } | null = null;
        if (row.privateJwe !== null) {
          // Stryker disable next-line StringLiteral: never reached: the key was read retired, and a retired key never gets its private key back
          if (!material) throw new SigningKeyError("the key became the signing key meanwhile; run the command again");
          rotated = await rotateInTx(tx, material, generation, options.ip, "revoked");
        }
        await tx.signingKey.delete({ where: { id: row.id } });
        await recordEventInTx(tx, { type: "signing_key.revoked", ip: options.ip, detail: { kid, generation: row.generation } });
        return { kid, revoked_at: at.toISOString(), rotated_to: rotated ? { kid: rotated.kid, created_at: rotated.createdAt.toISOString() } : null };
      });
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
  loaded = null;
}

/**
 * At server start: make the first key now rather than on the first token request, and load the signing key
 * (re-encrypting a row of the earlier form), so that a key that does not decrypt is logged at once. Never
 * stops the start: requests that need no id_token are served; those that do are a 500 until keys:rotate.
 */
export async function ensureSigningKeyAtStart(): Promise<void> {
  try {
    await ensureSigningKey();
  } catch (error) {
    log.error("could not make the first id_token signing key; the first OpenID token request will try again", {
      error: error instanceof Error ? error.message : String(error),
    });
    return;
  }
  try {
    await currentSigningKey();
  } catch (error) {
    log.error("the id_token signing key cannot be used; no id_token is issued until it is replaced", {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}
