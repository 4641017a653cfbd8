// A client's public keys for client assertions (RFC 7523 2.2, RFC 7517 5; docs/rules/tokens.md#client-keys):
// a JWK Set of 1 to MAX_CLIENT_KEYS keys, each an RSA key of at least 2048 bits (RS256) or an EC key on P-256
// (ES256), public members only (a private member is refused, never stored), `use` sig if present, `alg` if
// present the one its type allows. Given as a value (registration's `jwks`, the CLI's --jwks-file), never a
// URL: the server fetches no key from anywhere a client names (no `jwks_uri`). Stored as JSON with only the
// members the verification reads.
import { importJWK, type JWK } from "jose";
import { z } from "zod";

export const CLIENT_ASSERTION_ALGS = ["RS256", "ES256"] as const;
export const MAX_CLIENT_KEYS = 10;
const MIN_RSA_BITS = 2048;
const PRIVATE_MEMBERS = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];
const base64url = z.string().regex(/^[A-Za-z0-9_-]+$/, "must be base64url").max(2000);

const ZKey = z
  .object({
    kty: z.enum(["RSA", "EC"], { error: "kty must be RSA or EC" }),
    kid: z.string().min(1).max(200).optional(),
    use: z.literal("sig", { error: "use must be sig" }).optional(),
    alg: z.enum(CLIENT_ASSERTION_ALGS, { error: "alg must be RS256 or ES256" }).optional(),
    n: base64url.optional(),
    e: base64url.optional(),
    crv: z.string().optional(),
    x: base64url.optional(),
    y: base64url.optional(),
  })
  .passthrough();

const ZJwks = z.object({ keys: z.array(z.record(z.string(), z.unknown())).min(1, "at least one key").max(MAX_CLIENT_KEYS, `at most ${MAX_CLIENT_KEYS} keys`) });

export type ClientKeys = { keys: JWK[] };

/** The stored JWK Set (JSON), or the problem with it as a sentence for the field (`keys.0: ...`). */
export async function parseClientJwks(value: unknown): Promise<{ jwks: string } | { problem: string }> {
  const set = ZJwks.safeParse(value);
  if (!set.success) return { problem: `${set.error.issues[0]?.path.join(".") || "jwks"}: ${set.error.issues[0]?.message}` };
  const keys: JWK[] = [];
  for (const [index, raw] of set.data.keys.entries()) {
    const at = `keys.${index}`;
    const privateMember = PRIVATE_MEMBERS.find((member) => member in raw);
    if (privateMember) return { problem: `${at}: holds the private member ${privateMember}; send public keys only` };
    const parsed = ZKey.safeParse(raw);
    if (!parsed.success) return { problem: `${at}.${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message}` };
    const key = parsed.data;
    const common = { ...(key.kid ? { kid: key.kid } : {}), ...(key.use ? { use: key.use } : {}) };
    let jwk: JWK;
    if (key.kty === "RSA") {
      if (!key.n || !key.e) return { problem: `${at}: an RSA key needs n and e` };
      if (key.alg && key.alg !== "RS256") return { problem: `${at}: an RSA key signs RS256` };
      if (Buffer.from(key.n, "base64url").length * 8 < MIN_RSA_BITS) return { problem: `${at}: an RSA key needs at least ${MIN_RSA_BITS} bits` };
      jwk = { kty: "RSA", n: key.n, e: key.e, alg: "RS256", ...common };
    } else {
      if (key.crv !== "P-256" || !key.x || !key.y) return { problem: `${at}: an EC key must be on P-256 with x and y` };
      if (key.alg && key.alg !== "ES256") return { problem: `${at}: a P-256 key signs ES256` };
      jwk = { kty: "EC", crv: "P-256", x: key.x, y: key.y, alg: "ES256", ...common };
    }
    try {
      await importJWK(jwk, jwk.alg);
    } catch {
      return { problem: `${at}: not a usable ${jwk.alg} public key` };
    }
    keys.push(jwk);
  }
  const kids = keys.map((key) => key.kid).filter((kid) => kid !== undefined);
  if (new Set(kids).size !== kids.length) return { problem: "keys: two keys share a kid" };
  return { jwks: JSON.stringify({ keys }) };
}

/** The client's stored keys, or null for a client without keys. */
export function clientKeysOf(client: { jwks: string | null }): ClientKeys | null {
  return client.jwks === null ? null : (JSON.parse(client.jwks) as ClientKeys);
}
