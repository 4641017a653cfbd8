// The guarantees of the id_token signing keys (docs/rules/openid-connect.md#signing-keys), each on its own, in
// this process: rotations and a revocation that meet on one generation all succeed; revoking the signing key rotates first and records both steps; revoking a retired key makes
// none; an unknown kid is a 404 that names the problem; a rotation retires every key but the new one; a row
// that publishes another public key than the one its ciphertext holds never signs, nor one whose kid is not its
// key's thumbprint or whose ciphertext uses another content encryption; loading a key of this version's form
// leaves its ciphertext alone; a rotation or revocation whose insert the database refuses fails at once; the
// start makes the first key (none when a key exists) and logs, never throws, when it cannot; a rotation (or the
// deletion of every key) that lands between the two reads of a key load is followed, and one that keeps landing
// there ends the load after five tries. Also what discovery says is not supported, and UserInfo's answer
// without a token.
import { hkdfSync } from "node:crypto";
import { calculateJwkThumbprint, CompactEncrypt, exportJWK, generateKeyPair } from "jose";
import { describe, expect, it } from "vitest";
import { setEnvForTests } from "@/env";
import { db, write } from "@/db/client";
import { call } from "@/testing/app";
import { dpopKey, proof } from "@/testing/dpop";
import { makeClient, makeUser } from "@/testing/factories";
import { refuseInserts, refuseUpdates } from "@/testing/faults";
import { holdClaims } from "@/testing/race";
import { captureLog } from "@/testing/log-capture";
import { currentSigningKey, ensureSigningKeyAtStart, forgetLoadedSigningKey, revokeSigningKey, rotateSigningKey, signingKeyHooks } from "@/oidc/keys";

const detailOf = async (type: string, kid: string) => {
  const events = await (await db()).auditEvent.findMany({ where: { type }, orderBy: { id: "asc" } });
  return events.map((event) => JSON.parse(event.detail!) as Record<string, unknown>).filter((detail) => detail.kid === kid);
};

/** Runs `fn` with warnings and errors logged, and returns the lines of `level`. */
async function logged(fn: () => Promise<unknown>, level: "error" | "warn" = "error") {
  const saved = setEnvForTests({ logLevel: "warn" });
  try {
    const { lines } = await captureLog(fn);
    return lines.filter((line) => line.level === level);
  } finally {
    setEnvForTests(saved);
  }
}
const errorsLogged = (fn: () => Promise<unknown>) => logged(fn, "error");

/** The key that encrypts the signing keys at rest, derived from AUTH_SECRET as the code derives it. */
const encryptionKey = () => new Uint8Array(hkdfSync("sha256", process.env.AUTH_SECRET!, "", "oidc-signing-key-encryption", 32));

/** A new newest key row in the earlier form (a JWE naming only its kid, not bound to its row): its kid and ciphertext. */
async function insertLegacyRow(): Promise<{ kid: string; legacy: string }> {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  const legacy = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(await exportJWK(privateKey))))
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid, cty: "jwk+json" })
    .encrypt(encryptionKey());
  const generation = (await (await db()).signingKey.findFirstOrThrow({ orderBy: { generation: "desc" } })).generation + 1;
  await write((tx) => tx.signingKey.create({ data: { kid, generation, alg: "RS256", publicJwk: JSON.stringify(publicJwk), privateJwe: legacy } }));
  return { kid, legacy };
}

describe("revoking a signing key", () => {
  it("the signing key: a new key is made first and signs, the revoked row is gone, both steps are recorded", async () => {
    const { kid } = await rotateSigningKey();
    const revoked = await revokeSigningKey(kid, { ip: "203.0.113.9" });
    expect(revoked.kid).toBe(kid);
    expect(revoked.rotated_to).not.toBeNull();
    const next = revoked.rotated_to!.kid;
    expect(next).not.toBe(kid);
    expect(await (await db()).signingKey.findUnique({ where: { kid } })).toBeNull();
    const row = await (await db()).signingKey.findUniqueOrThrow({ where: { kid: next } });
    expect(row.privateJwe).not.toBeNull();
    expect(row.retiredAt).toBeNull();
    expect((await currentSigningKey()).kid).toBe(next);
    expect(await detailOf("signing_key.revoked", kid)).toEqual([{ kid, generation: expect.any(Number) }]);
    expect(await detailOf("signing_key.rotated", next)).toEqual([{ kid: next, generation: row.generation, reason: "revoked" }]);
  });

  it("a retired key: no new key is made", async () => {
    const { kid: retired } = await rotateSigningKey();
    const { kid: signing } = await rotateSigningKey();
    const revoked = await revokeSigningKey(retired);
    expect(revoked.rotated_to).toBeNull();
    expect((await currentSigningKey()).kid).toBe(signing);
    expect(await (await db()).signingKey.findUnique({ where: { kid: retired } })).toBeNull();
  });

  it("an unknown kid: 404 naming the problem", async () => {
    await expect(revokeSigningKey("no-such-kid")).rejects.toMatchObject({ status: 404, error: "kid: no such signing key (never made, or already revoked)" });
  });
});

describe("rotations and a revocation that read the same next generation", () => {
  it("each takes the next free generation on a later try: all succeed, the revoked key is gone, one key signs", async () => {
    const { kid: target } = await rotateSigningKey(); // the signing key, revoked below (it rotates first)
    // Held: every rotation retires this row, and the revocation deletes it.
    const held = await holdClaims("SigningKey", (await (await db()).signingKey.findUniqueOrThrow({ where: { kid: target } })).id);
    const revocation = revokeSigningKey(target);
    const rotations = [rotateSigningKey(), rotateSigningKey()];
    await held.waitForClaims(3); // every one has read the same next generation and waits to write it
    await held.release();
    const [revoked, ...rotated] = await Promise.all([revocation, ...rotations]);
    // The revocation rotates too when the key still signed as its transaction ran.
    const made = [...rotated.map((r) => r.kid), ...(revoked.rotated_to ? [revoked.rotated_to.kid] : [])];
    const rows = await (await db()).signingKey.findMany({ where: { kid: { in: made } } });
    expect(new Set(rows.map((row) => row.generation)).size).toBe(made.length);
    expect(await (await db()).signingKey.findUnique({ where: { kid: target } })).toBeNull();
    expect(await (await db()).signingKey.count({ where: { privateJwe: { not: null } } })).toBe(1);
  });
});

describe("a rotation", () => {
  it("retires every key but the new one, which alone holds a private key", async () => {
    const { kid } = await rotateSigningKey();
    const rows = await (await db()).signingKey.findMany();
    const fresh = rows.find((row) => row.kid === kid)!;
    expect(fresh.retiredAt).toBeNull();
    for (const row of rows.filter((r) => r.kid !== kid)) {
      expect(row.retiredAt).not.toBeNull();
      expect(row.privateJwe).toBeNull();
    }
  });
});

describe("loading the signing key", () => {
  it("a rotation between the look-up of the signing row and the read of the keys: it asks again and the new key signs", async () => {
    await rotateSigningKey(); // a signing row this process has not loaded yet
    let rotatedTo: string | null = null;
    signingKeyHooks.betweenReads = async () => {
      signingKeyHooks.betweenReads = undefined;
      rotatedTo = (await rotateSigningKey()).kid; // as another instance's keys:rotate would, meanwhile
    };
    try {
      expect((await currentSigningKey()).kid).toBe(rotatedTo);
    } finally {
      signingKeyHooks.betweenReads = undefined;
    }
    expect(rotatedTo).not.toBeNull();
  });

  it("every key deleted between the two reads: it asks again, and a new first key is made and signs", async () => {
    await rotateSigningKey();
    signingKeyHooks.betweenReads = async () => {
      signingKeyHooks.betweenReads = undefined;
      await write((tx) => tx.signingKey.deleteMany());
    };
    try {
      const { kid } = await currentSigningKey();
      const rows = await (await db()).signingKey.findMany();
      expect(rows.map((row) => [row.kid, row.generation])).toEqual([[kid, 1]]);
    } finally {
      signingKeyHooks.betweenReads = undefined;
    }
  });

  it("with no key at all, the first load makes one and signs with it", async () => {
    await write((tx) => tx.signingKey.deleteMany());
    forgetLoadedSigningKey();
    const { kid } = await currentSigningKey();
    expect((await (await db()).signingKey.findMany()).map((row) => [row.kid, row.generation])).toEqual([[kid, 1]]);
  });

  it("a signing row that changes between the two reads every time: it gives up after five tries with SigningKeyError", async () => {
    await rotateSigningKey();
    let rotations = 0;
    signingKeyHooks.betweenReads = async () => {
      rotations++;
      await rotateSigningKey();
    };
    try {
      await expect(currentSigningKey()).rejects.toMatchObject({ name: "SigningKeyError", message: "the signing key kept changing while it was being loaded" });
    } finally {
      signingKeyHooks.betweenReads = undefined;
    }
    expect(rotations).toBe(5);
    const { kid } = await rotateSigningKey();
    expect((await currentSigningKey()).kid).toBe(kid);
  });


  it("a key of this version's form is loaded as it is: its ciphertext is not written again", async () => {
    const { kid } = await rotateSigningKey();
    const before = (await (await db()).signingKey.findUniqueOrThrow({ where: { kid } })).privateJwe;
    forgetLoadedSigningKey();
    expect((await currentSigningKey()).kid).toBe(kid);
    expect((await (await db()).signingKey.findUniqueOrThrow({ where: { kid } })).privateJwe).toBe(before);
  });

  it("a row of the earlier form is re-encrypted in its own row only", async () => {
    await rotateSigningKey();
    const { kid, legacy } = await insertLegacyRow();
    const ciphertexts = async () => new Map((await (await db()).signingKey.findMany({ orderBy: { id: "asc" } })).map((row) => [row.kid, row.privateJwe]));
    const before = await ciphertexts();
    try {
      forgetLoadedSigningKey();
      expect((await currentSigningKey()).kid).toBe(kid);
      const after = await ciphertexts();
      expect(after.get(kid)).not.toBe(legacy);
      expect(new Map([...after].filter(([k]) => k !== kid))).toEqual(new Map([...before].filter(([k]) => k !== kid)));
    } finally {
      await rotateSigningKey();
    }
  });

  it("a row of the earlier form whose re-encryption fails still signs, and the failure is logged as a warning naming it", async () => {
    await rotateSigningKey();
    const { kid, legacy } = await insertLegacyRow();
    const undo = await refuseUpdates("SigningKey", "kid", kid);
    try {
      forgetLoadedSigningKey();
      const warnings = await logged(async () => expect((await currentSigningKey()).kid).toBe(kid), "warn");
      expect(warnings).toContainEqual(expect.objectContaining({ message: "could not re-encrypt a signing key in the row-bound form; it is tried again on the next load", kid, error: expect.any(String) }));
      expect((await (await db()).signingKey.findUniqueOrThrow({ where: { kid } })).privateJwe).toBe(legacy);
    } finally {
      await undo();
      await rotateSigningKey();
    }
  });

  it("a row that publishes another public key than the private key it holds never signs", async () => {
    const { kid: honest } = await rotateSigningKey();
    const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
    const other = await generateKeyPair("RS256", { extractable: true });
    const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
    const generation = (await (await db()).signingKey.findFirstOrThrow({ orderBy: { generation: "desc" } })).generation + 1;
    const privateJwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(await exportJWK(privateKey))))
      .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid, cty: "jwk+json", gen: generation })
      .encrypt(encryptionKey());
    const published = JSON.stringify(await exportJWK(other.publicKey));
    await write((tx) => tx.signingKey.create({ data: { kid, generation, alg: "RS256", publicJwk: published, privateJwe } }));
    try {
      forgetLoadedSigningKey();
      const errors = await errorsLogged(() => currentSigningKey());
      expect((await currentSigningKey()).kid).toBe(honest);
      expect(errors).toContainEqual(expect.objectContaining({ message: "a signing key does not load and is skipped", kid, error: expect.stringContaining(`signing key ${kid} (generation ${generation}) does not decrypt as its own row's key`) }));
    } finally {
      await rotateSigningKey();
    }
  });
});

describe("rows whose ciphertext does not hold the key they publish, under the row's kid", () => {
  it("a kid that is not its key's thumbprint, another exponent published, or another content encryption: none signs", async () => {
    const { kid: honest } = await rotateSigningKey();
    let generation = (await (await db()).signingKey.findFirstOrThrow({ orderBy: { generation: "desc" } })).generation;
    const bad: string[] = [];
    /** A newer row holding a key pair encrypted with this AUTH_SECRET, with one thing changed by `alter`. */
    const insert = async (alter: { kid?: string; publishedE?: string; enc?: string }) => {
      generation++;
      const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
      const publicJwk = await exportJWK(publicKey);
      const kid = alter.kid ?? (await calculateJwkThumbprint(publicJwk));
      const privateJwe = await new CompactEncrypt(new TextEncoder().encode(JSON.stringify(await exportJWK(privateKey))))
        .setProtectedHeader({ alg: "dir", enc: alter.enc ?? "A256GCM", kid, cty: "jwk+json", gen: generation })
        .encrypt(encryptionKey());
      const published = JSON.stringify({ ...publicJwk, ...(alter.publishedE ? { e: alter.publishedE } : {}) });
      await write((tx) => tx.signingKey.create({ data: { kid, generation, alg: "RS256", publicJwk: published, privateJwe } }));
      bad.push(kid);
    };
    await insert({ kid: `not-a-thumbprint-${generation}` });
    await insert({ publishedE: "Aw" }); // e = 3: the row publishes another public key with the same modulus
    await insert({ enc: "A128CBC-HS256" }); // also a 256-bit key under "dir", but not the content encryption used here
    try {
      forgetLoadedSigningKey();
      const errors = await errorsLogged(async () => expect((await currentSigningKey()).kid).toBe(honest));
      expect(errors.filter((line) => line.message === "a signing key does not load and is skipped").map((line) => line.kid)).toEqual([...bad].reverse());
    } finally {
      await rotateSigningKey();
    }
  });
});

describe("a rotation or revocation whose insert the database refuses", () => {
  it("fails with the database's error at once, making no key", async () => {
    const { kid } = await rotateSigningKey();
    const next = (await (await db()).signingKey.findUniqueOrThrow({ where: { kid } })).generation + 1;
    const undo = await refuseInserts("SigningKey", "generation", next);
    try {
      // The trigger's refusal is no unique violation: no later try can succeed, so none is made.
      await expect(rotateSigningKey()).rejects.toThrow(/signingKey\.create/);
      await expect(revokeSigningKey(kid)).rejects.toThrow(/signingKey\.create/);
    } finally {
      await undo();
    }
    expect(await (await db()).signingKey.count({ where: { generation: { gte: next } } })).toBe(0);
    expect((await currentSigningKey()).kid).toBe(kid);
  });
});

describe("the first key at start", () => {
  it("makes none when a key exists, even when generation 1 was revoked", async () => {
    await write((tx) => tx.signingKey.deleteMany());
    forgetLoadedSigningKey();
    const { kid: first } = await rotateSigningKey(); // generation 1
    const { kid: second } = await rotateSigningKey();
    await revokeSigningKey(first);
    await ensureSigningKeyAtStart();
    expect((await (await db()).signingKey.findMany()).map((row) => row.kid)).toEqual([second]);
  });

  it("is made at start, and the start logs, without throwing, a key it cannot make or load", async () => {
    await write((tx) => tx.signingKey.deleteMany());
    forgetLoadedSigningKey();
    const undo = await refuseInserts("SigningKey", "generation", 1);
    let errors;
    try {
      errors = await errorsLogged(() => ensureSigningKeyAtStart());
    } finally {
      await undo();
    }
    expect(errors).toContainEqual(expect.objectContaining({ message: "could not make the first id_token signing key; the first OpenID token request will try again", error: expect.any(String) }));
    await rotateSigningKey(); // with no key at all: generation 1
    const rows = await (await db()).signingKey.findMany();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.generation).toBe(1);
    expect((await currentSigningKey()).kid).toBe(rows[0]!.kid);
    forgetLoadedSigningKey(); // as a restart does: the key loaded under the old AUTH_SECRET is gone
    const saved = setEnvForTests({ authSecret: "another-secret-another-secret-0123456789" });
    try {
      const unreadable = await errorsLogged(() => ensureSigningKeyAtStart());
      // The error names why the key does not load, not merely that none did.
      expect(unreadable).toContainEqual(expect.objectContaining({ message: "the id_token signing key cannot be used; no id_token is issued until it is replaced", error: expect.stringContaining("does not decrypt as its own row's key") }));
    } finally {
      setEnvForTests(saved);
      forgetLoadedSigningKey();
    }
    expect((await currentSigningKey()).kid).toBe(rows[0]!.kid);
  });
});

describe("discovery and UserInfo", () => {
  it("discovery says that the claims parameter, request objects and request_uri are not supported", async () => {
    const res = await call("GET", "/.well-known/openid-configuration");
    expect(res.json).toMatchObject({ claims_parameter_supported: false, request_parameter_supported: false, request_uri_parameter_supported: false });
  });

  it("UserInfo with a DPoP-bound token and a proof of another key: 401 invalid_dpop_proof", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const key = await dpopKey();
    const token = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly openid" },
      headers: { dpop: await proof(key, { url: "http://localhost:3000/api/connect/oauth2/token/" }) },
    });
    expect(token.status).toBe(200);
    const accessToken = String(token.json.access_token);
    const url = "http://localhost:3000/api/connect/oauth2/userinfo/";
    const res = await call("GET", "/api/connect/oauth2/userinfo/", { headers: { authorization: `DPoP ${accessToken}`, dpop: await proof(await dpopKey(), { method: "GET", url, accessToken }) } });
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: "invalid_dpop_proof" });
    expect(res.headers.get("www-authenticate")).toContain('error="invalid_dpop_proof"');
  });

  it("UserInfo without a token: 401 authentication required with the Bearer challenge", async () => {
    const res = await call("GET", "/api/connect/oauth2/userinfo/");
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ error: "authentication required" });
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="api"/);
  });
});
