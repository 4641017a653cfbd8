// What a newly registered client can try at once (docs/rules/pages.md#editing-a-client): the issuer, and for a
// client that redirects a browser an authorization URL built from the discovery metadata
// (src/oidc/discovery.ts) with its first redirect URI; a public code client's URL carries a PKCE challenge
// (RFC 7636 4.2, S256) whose verifier is shown beside it for the token request.
import { createHash, randomBytes } from "node:crypto";
import { openidConfiguration } from "@/oidc/discovery";

export type TryIt = { issuer: string; authorizationUrl: string | null; codeVerifier: string | null; tokenEndpoint: string; deviceEndpoint: string | null };

export function tryIt(client: { client_id: string; grant_type: string; redirect_uris: string[]; public: boolean }): TryIt {
  const meta = openidConfiguration();
  const base = { issuer: meta.issuer, tokenEndpoint: meta.token_endpoint, authorizationUrl: null, codeVerifier: null, deviceEndpoint: null };
  if (client.grant_type === "device_code") return { ...base, deviceEndpoint: meta.device_authorization_endpoint };
  const redirectUri = client.redirect_uris[0];
  if (!redirectUri || (client.grant_type !== "authorization_code" && client.grant_type !== "implicit")) return base;
  const query = new URLSearchParams({
    response_type: client.grant_type === "implicit" ? "token" : "code",
    client_id: client.client_id,
    redirect_uri: redirectUri,
    scope: "openid profile readonly",
    state: randomBytes(8).toString("base64url"),
  });
  if (client.grant_type === "implicit") query.set("scope", "readonly");
  let codeVerifier: string | null = null;
  if (client.grant_type === "authorization_code" && client.public) {
    codeVerifier = randomBytes(32).toString("base64url");
    query.set("code_challenge", createHash("sha256").update(codeVerifier).digest("base64url"));
    query.set("code_challenge_method", "S256");
  }
  return { ...base, authorizationUrl: `${meta.authorization_endpoint}?${query}`, codeVerifier };
}
