// Pushed authorization requests (RFC 9126, CONTRACT.md 13). POST /api/connect/oauth2/par/: the client
// authenticates as at the token endpoint (a public client sends client_id), the parameters are validated as
// the authorization endpoint would (2.1: redirect URI, response type, scope, PKCE, state, resource), and
// stored for 60 seconds under a random request_uri (201 {"request_uri", "expires_in"}; only its digest is
// kept). The authorization endpoint then takes client_id and request_uri only, and uses the stored request
// once: the use is a conditional write (claim first, src/par/pushed-request-store.ts), made when the
// signed-in person reaches the decision, so that the way through the sign-in page does not spend it.
// Nothing secret is stored (README, Security): only the parameters the authorization endpoint reads are kept,
// never the client's authentication (client_secret, client_assertion), a code_verifier or anything else sent.
import { now } from "@/clock";
import { readBody } from "@/http/body";
import { json, NO_STORE } from "@/http/respond";
import { matchRedirectUri } from "@/clients/redirect-uri";
import { redirectUrisOf } from "@/clients/represent";
import { authenticateClient } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { digest, randomSecret } from "@/server/crypto";
import { write } from "@/server/db";
import { validateAuthorizationRequest } from "@/oauth/authorize";
import { REQUEST_URI_PREFIX } from "@/par/pushed-request-store";

export const PUSHED_REQUEST_TTL_SECONDS = 60;
/**
 * The authorization request's own parameters (RFC 6749 4.1.1 and 4.2.1, RFC 7636, RFC 8707, OpenID Connect
 * Core 3.1.2.1), the only ones stored; anything else sent with the push is ignored (RFC 6749 3.1), among
 * them the client's authentication, which is about the push and was checked above.
 */
const STORED = new Set(["response_type", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource", "nonce", "prompt", "max_age"]);

export async function handlePushedAuthorizationRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  const client = await authenticateClient(request, params);
  if ("request_uri" in params) throw new OAuthError("invalid_request", {}, "request_uri cannot be pushed");
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== "string") throw new OAuthError("invalid_request", {}, `${name} must be a string`);
    if (STORED.has(name)) query.append(name, value);
  }
  const redirectUri = query.get("redirect_uri");
  const matched = redirectUri ? matchRedirectUri(redirectUrisOf(client), redirectUri) : null;
  if (!matched) throw new OAuthError("invalid_request", {}, "redirect_uri missing or not registered");
  const state = query.get("state");
  await validateAuthorizationRequest(query, client, { redirectUri: matched, mode: query.get("response_type") === "token" ? "fragment" : "query", state: state || null });

  const handle = randomSecret();
  const at = now();
  await write((tx) =>
    tx.pushedAuthorizationRequest.create({
      data: { digest: digest(handle), clientId: client.id, params: JSON.stringify([...query]), createdAt: at, expiresAt: new Date(at.getTime() + PUSHED_REQUEST_TTL_SECONDS * 1000) },
    }),
  );
  return json({ request_uri: REQUEST_URI_PREFIX + handle, expires_in: PUSHED_REQUEST_TTL_SECONDS }, 201, NO_STORE);
}
