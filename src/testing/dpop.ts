// DPoP proofs for tests (RFC 9449 4.2), made with jose as a client would, and variants that break one rule.
import { randomUUID } from "node:crypto";
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from "jose";
import { nowMs } from "@/clock";
import { accessTokenHash } from "@/dpop/proof";

export type DpopKey = { privateKey: CryptoKey; publicJwk: JWK; privateJwk: JWK; alg: "ES256" | "RS256"; jkt: string };

export async function dpopKey(alg: "ES256" | "RS256" = "ES256"): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, privateJwk: await exportJWK(privateKey), alg, jkt: await calculateJwkThumbprint(publicJwk, "sha256") };
}

export type ProofOptions = {
  method?: string;
  url: string;
  accessToken?: string;
  /** Overrides of the payload (e.g. an old iat) and of the header (typ, jwk). */
  claims?: Record<string, unknown>;
  header?: Record<string, unknown>;
  /** Sign with this key while the header names `key`'s public key. */
  signWith?: DpopKey;
};

export async function proof(key: DpopKey, options: ProofOptions): Promise<string> {
  const payload: Record<string, unknown> = {
    jti: randomUUID(),
    htm: options.method ?? "POST",
    htu: options.url,
    iat: Math.floor(nowMs() / 1000),
    ...(options.accessToken ? { ath: accessTokenHash(options.accessToken) } : {}),
    ...options.claims,
  };
  const signer = options.signWith ?? key;
  return new SignJWT(payload)
    .setProtectedHeader({ typ: "dpop+jwt", alg: signer.alg, jwk: key.publicJwk, ...options.header } as never)
    .sign(signer.privateKey);
}

/** An unsecured JWS (alg none) with the given header and payload. */
export function unsignedProof(key: DpopKey, url: string): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ typ: "dpop+jwt", alg: "none", jwk: key.publicJwk })}.${part({ jti: randomUUID(), htm: "POST", htu: url, iat: Math.floor(nowMs() / 1000) })}.`;
}
