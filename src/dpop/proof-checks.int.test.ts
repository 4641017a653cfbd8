// The checks of a DPoP proof one by one (RFC 9449 4.3, docs/rules/tokens.md#dpop), against verifyDpopProof()
// itself, at their exact boundaries: a frozen clock on a whole second makes "60 s either way" exact.
import { randomUUID } from "node:crypto";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { db } from "@/db/client";
import { accessTokenHash, DpopProofError, expectedHtu, verifyDpopProof } from "@/dpop/proof";
import { digest } from "@/secrets";
import { dpopKey, proof, type DpopKey } from "@/testing/dpop";

const URL_ = "http://localhost:3000/api/connect/oauth2/token/";
const request = (dpop: string | null, url = URL_, method = "POST") => new Request(url, { method, headers: dpop === null ? {} : { dpop } });
const seconds = () => nowMs() / 1000;

/**
 * Removes a proof's jti row that this file's clock kept beyond two minutes from now: other test files count the
 * rows alive while they run and prune them two minutes on (src/dpop/dpop.int.test.ts).
 */
const forget = async (jti: string) => {
  await (await db()).dpopProof.deleteMany({ where: { key: digest(`${key.jkt}:${jti}`) } });
};

let key: DpopKey;
beforeEach(async () => {
  key = await dpopKey();
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(Math.ceil(Date.now() / 1000) * 1000 + 5000);
});
afterEach(() => vi.useRealTimers());

async function refusal(dpop: string | null, options: { accessToken?: string; url?: string; method?: string } = {}) {
  const error = await verifyDpopProof(request(dpop, options.url, options.method), { accessToken: options.accessToken }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DpopProofError);
  return (error as Error).message;
}

describe("a DPoP proof's iat", () => {
  it("is accepted exactly 60 s before or after our clock, and refused a second further", async () => {
    const now = seconds();
    expect(Number.isInteger(now)).toBe(true);
    for (const iat of [now - 60, now + 60, now]) {
      const jti = randomUUID();
      await expect(verifyDpopProof(request(await proof(key, { url: URL_, claims: { iat, jti } })))).resolves.toMatchObject({ jkt: key.jkt });
      await forget(jti);
    }
    for (const iat of [now - 61, now + 61]) expect(await refusal(await proof(key, { url: URL_, claims: { iat } }))).toBe("iat too far from now");
    expect(await refusal(await proof(key, { url: URL_, claims: { iat: String(now) } }))).not.toBe("jti replayed");
  });

  it("decides how long the jti is kept: 60 s past the later of iat and now", async () => {
    const now = seconds();
    const stored = async (iat: number) => {
      const jti = randomUUID();
      await verifyDpopProof(request(await proof(key, { url: URL_, claims: { iat, jti } })));
      const row = await (await db()).dpopProof.findUniqueOrThrow({ where: { key: digest(`${key.jkt}:${jti}`) } });
      return row.expiresAt.getTime() / 1000 - now;
    };
    expect(await stored(now - 30)).toBe(60);
    expect(await stored(now + 30)).toBe(90);
  });
});

describe("a DPoP proof's other time claims", () => {
  it("are read by our clock: a proof whose exp has passed by it is refused", async () => {
    advanceClock(3_600_000);
    try {
      const exp = Math.floor(seconds()) - 10; // passed by our clock, an hour ahead by the system's
      expect(await refusal(await proof(key, { url: URL_, claims: { exp } }))).toBe("signature or claims do not verify");
      const jti = randomUUID();
      await expect(verifyDpopProof(request(await proof(key, { url: URL_, claims: { exp: exp + 60, jti } })))).resolves.toMatchObject({ jkt: key.jkt });
      await forget(jti);
    } finally {
      resetClock();
    }
  });
});

describe("a DPoP proof's jti", () => {
  it("is a string of 1 to 256 characters, used once per key", async () => {
    await expect(verifyDpopProof(request(await proof(key, { url: URL_, claims: { jti: "j".repeat(256) } })))).resolves.toEqual({ jkt: key.jkt, jti: "j".repeat(256) });
    for (const jti of ["", "j".repeat(257), 42]) expect(await refusal(await proof(key, { url: URL_, claims: { jti } }))).toBe("bad jti");
    const once = await proof(key, { url: URL_ });
    await verifyDpopProof(request(once));
    expect(await refusal(once)).toBe("jti replayed");
    // The same jti from another key is another proof.
    const jti = randomUUID();
    await verifyDpopProof(request(await proof(key, { url: URL_, claims: { jti } })));
    await expect(verifyDpopProof(request(await proof(await dpopKey(), { url: URL_, claims: { jti } })))).resolves.toMatchObject({ jti });
  });

  it("is not used up by a proof that fails another check", async () => {
    const jti = randomUUID();
    expect(await refusal(await proof(key, { url: URL_, method: "GET", claims: { jti } }))).toBe("htm is not the request's method");
    await expect(verifyDpopProof(request(await proof(key, { url: URL_, claims: { jti } })))).resolves.toMatchObject({ jti });
  });
});

describe("a DPoP proof's method, URL and access token hash", () => {
  it("must name the request's method and URL, query and fragment aside", async () => {
    expect(await refusal(await proof(key, { url: URL_, method: "PUT" }))).toBe("htm is not the request's method");
    await expect(verifyDpopProof(request(await proof(key, { url: URL_, method: "GET" }), URL_, "GET"))).resolves.toMatchObject({ jkt: key.jkt });
    await expect(verifyDpopProof(request(await proof(key, { url: `${URL_}?a=1` }), `${URL_}?b=2`))).resolves.toMatchObject({ jkt: key.jkt });
    expect(await refusal(await proof(key, { url: "http://localhost:3000/api/connect/oauth2/token" }))).toBe("htu is not the request's URL");
    expect(await refusal(await proof(key, { url: URL_, claims: { htu: 7 } }))).toBe("htu is not the request's URL");
    expect(await refusal(await proof(key, { url: URL_, claims: { htu: "not a url" } }))).toBe("htu is not the request's URL");
    expect(await refusal(await proof(key, { url: URL_, claims: { htu: [URL_] } }))).toBe("htu is not the request's URL");
    expect(expectedHtu(request(null, "http://internal:8080/api/user/1/?x=1"))).toBe("http://localhost:3000/api/user/1/");
  });

  it("carries the hash of the access token presented with it, and only then must", async () => {
    // RFC 9449 7.1's example token and its ath.
    const token = "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU";
    expect(accessTokenHash(token)).toBe("fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo");
    await expect(verifyDpopProof(request(await proof(key, { url: URL_, accessToken: token })), { accessToken: token })).resolves.toMatchObject({ jkt: key.jkt });
    expect(await refusal(await proof(key, { url: URL_ }), { accessToken: token })).toBe("ath does not match the token");
    expect(await refusal(await proof(key, { url: URL_, accessToken: "another" }), { accessToken: token })).toBe("ath does not match the token");
    await expect(verifyDpopProof(request(await proof(key, { url: URL_, accessToken: "another" })))).resolves.toMatchObject({ jkt: key.jkt });
  });
});

describe("a DPoP proof's header", () => {
  it("is one compact JWS of typ dpop+jwt, ES256 or RS256, with a public jwk", async () => {
    expect(await refusal(null)).toBe("not one compact JWS");
    const good = await proof(key, { url: URL_ });
    expect(await refusal(`${good},${good}`)).toBe("not one compact JWS");
    expect(await refusal(`x${good}`.replace(/^x[^.]*/, "@@@"))).toBe("not one compact JWS");
    expect(await refusal(`${Buffer.from("{not json").toString("base64url")}.e30.sig`)).toBe("unreadable header");
    expect(await refusal(await proof(key, { url: URL_, header: { typ: "JWT" } }))).toBe("typ is not dpop+jwt");
    const es384 = await dpopKey("ES256");
    const { generateKeyPair, exportJWK, SignJWT } = await import("jose");
    const pair = await generateKeyPair("ES384");
    const es384Proof = await new SignJWT({ jti: randomUUID(), htm: "POST", htu: URL_, iat: seconds() })
      .setProtectedHeader({ typ: "dpop+jwt", alg: "ES384", jwk: await exportJWK(pair.publicKey) })
      .sign(pair.privateKey);
    expect(await refusal(es384Proof)).toBe("alg not allowed");
    expect(await refusal(await proof(es384, { url: URL_, header: { jwk: undefined } }))).toBe("no jwk");
    expect(await refusal(await proof(es384, { url: URL_, header: { jwk: [es384.publicJwk] } }))).toBe("no jwk");
    expect(await refusal(await proof(es384, { url: URL_, header: { jwk: "key" } }))).toBe("no jwk");
    for (const member of ["d", "p", "q", "dp", "dq", "qi", "oth", "k"])
      expect(await refusal(await proof(es384, { url: URL_, header: { jwk: { ...es384.publicJwk, [member]: "AQAB" } } })), member).toBe("jwk holds a private key");
    await expect(verifyDpopProof(request(await proof(await dpopKey("RS256"), { url: URL_ })))).resolves.toHaveProperty("jkt");
  });
});
