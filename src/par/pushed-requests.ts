// Pushed authorization requests (RFC 9126, docs/rules/tokens.md#pushed-authorization-requests). POST
// /api/connect/oauth2/par/: the client authenticates as at the token endpoint (a public client sends
// client_id), the parameters are validated as the authorization endpoint would (2.1: redirect URI, response
// type, scope, PKCE, state, resource), and stored for 60 seconds under a random request_uri (201
// {"request_uri", "expires_in"}; only its digest is kept). The authorization endpoint then takes client_id and
// request_uri only, and uses the stored request once: the use is a conditional write (claim first,
// src/oauth/pushed-request-store.ts), made when the signed-in person reaches the decision, so that the way
// through the sign-in page does not spend it. Nothing secret is stored
// (docs/rules/accounts.md#secrets-at-rest): only the parameters the authorization endpoint reads are kept,
// never the client's authentication (client_secret, client_assertion), a code_verifier or anything else sent.
// A client holds at most MAX_LIVE_PUSHED_REQUESTS unexpired pushed requests (then 429 rate_limited,
// Retry-After until the first of them expires; docs/rules/accounts.md#limits): counted and inserted in one
// transaction serialised per client (src/limits/limiter.ts), so that a burst cannot pass the cap. A `request`
// (a request object) is 400 request_not_supported.
import { now } from "@/clock";
import { readBody } from "@/http/body";
import { json, NO_STORE } from "@/http/respond";
import { matchRedirectUri } from "@/clients/redirect-uri";
import { redirectUrisOf } from "@/clients/represent";
import { authenticateClient } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { digest, randomSecret } from "@/secrets";
import { write } from "@/db/client";
import { validateAuthorizationRequest } from "@/oauth/authorize";
import { REQUEST_URI_PREFIX } from "@/oauth/pushed-request-store";
import { recordEvent } from "@/audit/record-event";
import { assertUnderCapInTx, isRateLimited, lockKeysInTx } from "@/limits/limiter";

export const PUSHED_REQUEST_TTL_SECONDS = 60;
/**
 * The authorization request's own parameters (RFC 6749 4.1.1 and 4.2.1, RFC 7636, RFC 8707, OpenID Connect
 * Core 3.1.2.1), the only ones stored; anything else sent with the push is ignored (RFC 6749 3.1), among
 * them the client's authentication, which is about the push and was checked above.
 */
const STORED = new Set(["response_type", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "resource", "nonce", "prompt", "max_age"]);
/** Unexpired pushed requests per client. */
export const MAX_LIVE_PUSHED_REQUESTS = 100;

export async function handlePushedAuthorizationRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  const client = await authenticateClient(request, params);
  if ("request_uri" in params) {
    throw new OAuthError(
      "invalid_request",
      {},
      // Stryker disable next-line StringLiteral: the detail of an OAuthError is for the log only, never sent to the client
      "request_uri cannot be pushed",
    );
  }
  // Request objects are not supported (docs/rules/openid-connect.md#request-objects): a pushed one neither.
  if ("request" in params) throw new OAuthError("request_not_supported");
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (typeof value !== "string") {
      throw new OAuthError(
        "invalid_request",
        {},
        // Stryker disable next-line StringLiteral: the detail of an OAuthError is for the log only, never sent to the client
        `${name} must be a string`,
      );
    }
    if (STORED.has(name)) query.append(name, value);
  }
  const redirectUri = query.get("redirect_uri");
  const matched = redirectUri ? matchRedirectUri(redirectUrisOf(client), redirectUri) : null;
  if (!matched) {
    throw new OAuthError(
      "invalid_request",
      {},
      // Stryker disable next-line StringLiteral: the detail of an OAuthError is for the log only, never sent to the client
      "redirect_uri missing or not registered",
    );
  }
  const state = query.get("state");
  // Stryker disable next-line ConditionalExpression,EqualityOperator,StringLiteral: validation reads the redirect URI and state of its target, never the response mode, which only the authorization endpoint's redirect uses
  const mode = query.get("response_type") === "token" ? "fragment" : "query";
  await validateAuthorizationRequest(query, client, { redirectUri: matched, mode, state: state || null });

  const handle = randomSecret();
  await write(async (tx) => {
    // PostgreSQL: one client's inserts one at a time; SQLite: the insert is the first statement (write lock).
    await lockKeysInTx(tx, [`pushed-requests:${client.id}`]);
    const at = now();
    const created = await tx.pushedAuthorizationRequest.create({
      data: { digest: digest(handle), clientId: client.id, params: JSON.stringify([...query]), createdAt: at, expiresAt: new Date(at.getTime() + PUSHED_REQUEST_TTL_SECONDS * 1000) },
      select: { id: true },
    });
    const live = { clientId: client.id, expiresAt: { gt: at }, id: { not: created.id } };
    await assertUnderCapInTx({
      max: MAX_LIVE_PUSHED_REQUESTS,
      live: () => tx.pushedAuthorizationRequest.count({ where: live }),
      ends: async () => {
        const first = await tx.pushedAuthorizationRequest.findFirst({
          where: live,
          // Stryker disable next-line ObjectLiteral: both databases read these rows through the (clientId, expiresAt) index, in expiry order, with or without it (the cap's Retry-After test stores the first to expire last)
          orderBy: { expiresAt: "asc" },
          select: { expiresAt: true },
        });
        // Stryker disable next-line OptionalChaining: over the cap at least MAX_LIVE_PUSHED_REQUESTS unexpired rows were just counted in this transaction; pruning deletes only long-expired rows, and deleting the client waits for this transaction, whose insert references it
        return first?.expiresAt ?? null;
      },
    });
  }).catch(async (error: unknown) => {
    if (isRateLimited(error)) await recordEvent({ type: "rate_limited", clientId: client.clientId, detail: { limit: "pushed requests" } });
    throw error;
  });
  return json({ request_uri: REQUEST_URI_PREFIX + handle, expires_in: PUSHED_REQUEST_TTL_SECONDS }, 201, NO_STORE);
}
