// RFC 6749 4.1.3: Access Token Request (authorization code grant), with PKCE (RFC 7636) and the code replay
// rule of RFC 6749 4.1.2 / RFC 9700 4.2.4.
//
// A code is single-use, valid 60 seconds, and bound to the client, the redirect URI, the user, the scopes
// and the PKCE challenge. The exchange claims the code with one conditional write, committed together with
// the tokens and the token.issued event (src/db/fast-sql.ts exchangeCode); any second use, even one racing
// the first, is invalid_grant and revokes every token issued from the code
// (docs/rules/tokens.md#authorization-codes).
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { digest } from "@/secrets";
import { auditRow } from "@/audit/record-event";
import { authorizationCodeByDigest, exchangeCode } from "@/db/fast-sql";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";
import { verifierMatches } from "@/oauth/pkce";
import { storedScopes } from "@/oauth/scope";
import { dpopBinding, mintTokens, revokeGrant, unconfirmedAccount, type TokenRecord } from "@/oauth/tokens";
import type { GrantContext } from "@/token-endpoint/grants/grant";
import { storedAudience } from "@/oauth/resource";

export const GRANT_TYPE = "authorization_code";

export async function authorizationCodeGrant(client: Client, params: Record<string, unknown>, context: GrantContext): Promise<TokenRecord> {
  // Validate
  if (client.grantType !== GRANT_TYPE) throw new OAuthError("unauthorized_client");
  const code = requiredParam(params, "code");
  const redirectUri = requiredParam(params, "redirect_uri");
  const verifier = stringParam(params, "code_verifier");

  const row = await authorizationCodeByDigest(digest(code)); // one statement (src/db/fast-sql.ts)
  if (!row || row.clientId !== client.id) throw new OAuthError("invalid_grant", {}, "unknown code");
  if (row.usedAt) {
    await revokeGrant(row.grantId, { type: "code.reused" });
    throw new OAuthError("invalid_grant", {}, "code replayed; tokens issued from it revoked");
  }
  if (row.expiresAt <= now()) throw new OAuthError("invalid_grant", {}, "expired code");
  if (row.redirectUri !== redirectUri) throw new OAuthError("invalid_grant", {}, "redirect_uri differs");
  if (row.codeChallenge) {
    if (!verifier || !verifierMatches(verifier, row.codeChallenge)) throw new OAuthError("invalid_grant", {}, "PKCE verification failed");
  } else if (verifier !== undefined) {
    // RFC 9700 2.1.1: a verifier for a code issued without a challenge is a downgrade attempt.
    throw new OAuthError("invalid_grant", {}, "code_verifier without code_challenge");
  }
  // RFC 8707 2.2: the resource the authorization request named is the tokens' audience; the token request may
  // name it again, or name one when the authorization request named none, but not another
  // (docs/rules/agents.md#audience). Refused before the code is spent.
  if (row.audience !== null && context.audience !== null && row.audience !== context.audience) {
    throw new OAuthError("invalid_target", {}, "resource differs from the authorization request's");
  }
  const audience = row.audience !== null ? storedAudience(row.audience) : context.audience;

  // Respond: claim the code and issue, in one commit; the id_token, when there is one, is made after it
  // (src/token-endpoint/token-endpoint.ts).
  const at = now();
  const scopes = storedScopes(row.scopes);
  const minted = mintTokens({ grantId: row.grantId, clientId: row.clientId, userId: row.userId, scopes, refreshScopes: scopes, ...dpopBinding(client, context), audience }, at);
  const outcome = await exchangeCode({
    codeId: row.id,
    grantId: row.grantId,
    userId: row.userId,
    at,
    access: minted.access,
    refresh: minted.refresh!,
    audit: auditRow({ type: "token.issued", userId: row.userId, clientId: client.clientId, detail: { grant_type: GRANT_TYPE, scope: minted.record.scope } }),
  });
  if (outcome === "unconfirmed") throw unconfirmedAccount(GRANT_TYPE);
  if (outcome === "lost") {
    await revokeGrant(row.grantId, { type: "code.reused", detail: { concurrent: true } });
    throw new OAuthError("invalid_grant", {}, "code used concurrently; tokens issued from it revoked");
  }
  return minted.record;
}
