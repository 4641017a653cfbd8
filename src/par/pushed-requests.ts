// Pushed authorization requests (RFC 9126, CONTRACT.md 13). POST /api/connect/oauth2/par/: the client
// authenticates as at the token endpoint (a public client sends client_id), the parameters are validated as
// the authorization endpoint would (2.1: redirect URI, response type, scope, PKCE, state, resource), and
// stored for 60 seconds under a random request_uri (201 {"request_uri", "expires_in"}; only its digest is
// kept). The authorization endpoint then takes client_id and request_uri only, and uses the stored request
// once: the use is a conditional write (claim first), made when the signed-in person reaches the decision,
// so that the way through the sign-in page does not spend it.
import { now } from "@/clock";
import { readBody } from "@/http/body";
import { json, NO_STORE } from "@/http/respond";
import { matchRedirectUri } from "@/clients/redirect-uri";
import { redirectUrisOf } from "@/clients/represent";
import { authenticateClient } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { digest, randomSecret } from "@/server/crypto";
import { db, write } from "@/server/db";
import { validateAuthorizationRequest } from "@/oauth/authorize";

export const REQUEST_URI_PREFIX = "urn:ietf:params:oauth:request_uri:";
export const PUSHED_REQUEST_TTL_SECONDS = 60;
/** Parameters that are about the push itself, not the authorization request. */
const NOT_STORED = new Set(["client_id", "client_secret", "client_assertion", "client_assertion_type"]);

export async function handlePushedAuthorizationRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  const client = await authenticateClient(request, params);
  if ("request_uri" in params) throw new OAuthError("invalid_request", {}, "request_uri cannot be pushed");
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== "string") throw new OAuthError("invalid_request", {}, `${name} must be a string`);
    if (!NOT_STORED.has(name)) query.append(name, value);
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

/** The stored parameters of a live, unused request_uri of this client, or null. */
export async function pushedParams(requestUri: string, clientId: number): Promise<{ id: number; query: URLSearchParams } | null> {
  if (!requestUri.startsWith(REQUEST_URI_PREFIX)) return null;
  const row = await (await db()).pushedAuthorizationRequest.findUnique({ where: { digest: digest(requestUri.slice(REQUEST_URI_PREFIX.length)) } });
  if (!row || row.clientId !== clientId || row.usedAt || row.expiresAt <= now()) return null;
  return { id: row.id, query: new URLSearchParams(JSON.parse(row.params) as Array<[string, string]>) };
}

/** Uses a pushed request up: true for exactly one caller, while it is unused and unexpired. */
export async function claimPushedRequest(id: number): Promise<boolean> {
  const at = now();
  const { count } = await write((tx) => tx.pushedAuthorizationRequest.updateMany({ where: { id, usedAt: null, expiresAt: { gt: at } }, data: { usedAt: at } }));
  return count === 1;
}
