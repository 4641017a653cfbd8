// The id_token_hint of the logout endpoint (OpenID Connect RP-Initiated Logout 1.0 section 2 and 4;
// docs/rules/openid-connect.md#logout): an id_token this server signed, with a key the JWKS still publishes
// (a retired key stays a day), `iss` this issuer and `typ` JWT. An expired one is accepted (the
// specification expects exactly that: the relying party logs out after its id_token has expired), so jose's
// compactVerify checks the signature and this file the claims, without a clock.
import { compactVerify, createLocalJWKSet, decodeProtectedHeader } from "jose";
import { z } from "zod";
import { env } from "@/env";
import { publishedKeys, SIGNING_ALG } from "@/oidc/keys";

export type IdTokenHint = { sub: string; audiences: string[]; sid: string | null };

const ZClaims = z.object({
  iss: z.string(),
  sub: z.string().min(1),
  aud: z.union([z.string(), z.array(z.string()).min(1)]),
  sid: z.string().optional(),
});

/** The hint's subject, audiences and session, or null when it is not an id_token this server signed. */
export async function verifyIdTokenHint(hint: string): Promise<IdTokenHint | null> {
  try {
    if (decodeProtectedHeader(hint).typ !== "JWT") return null;
    const { payload } = await compactVerify(hint, createLocalJWKSet(await publishedKeys()), { algorithms: [SIGNING_ALG] });
    const json: unknown = JSON.parse(new TextDecoder().decode(payload));
    const claims = ZClaims.safeParse(json);
    // A logout token (it has `events`) is no id_token, whatever its header says.
    if (!claims.success || claims.data.iss !== env().appUrl || "events" in (json as object)) return null;
    const audiences = typeof claims.data.aud === "string" ? [claims.data.aud] : claims.data.aud;
    return { sub: claims.data.sub, audiences, sid: claims.data.sid ?? null };
  } catch {
    return null;
  }
}
