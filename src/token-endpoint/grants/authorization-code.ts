// RFC 6749 4.1.3: Access Token Request (authorization code grant), with PKCE (RFC 7636) and the code replay
// rule of RFC 6749 4.1.2 / RFC 9700 4.2.4.
//
// A code is single-use, valid 60 seconds, and bound to the client, the redirect URI, the user, the scopes
// and the PKCE challenge. The exchange claims the code with one conditional write; any second use, even one
// racing the first, is invalid_grant and revokes every token issued from the code
// (docs/rules/tokens.md#authorization-codes).
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { digest } from "@/secrets";
import { db, write } from "@/db/client";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";
import { verifierMatches } from "@/oauth/pkce";
import { storedScopes } from "@/oauth/scope";
import { dpopBinding, issueTokens, revokeGrant, type TokenRecord } from "@/oauth/tokens";
import type { GrantContext } from "@/token-endpoint/grants/grant";
import { storedAudience } from "@/oauth/resource";
import { recordEventInTx } from "@/audit/record-event";

export const GRANT_TYPE = "authorization_code";

class LostClaim extends Error {}

export async function authorizationCodeGrant(client: Client, params: Record<string, unknown>, context: GrantContext): Promise<TokenRecord> {
  // Validate
  if (client.grantType !== GRANT_TYPE) throw new OAuthError("unauthorized_client");
  const code = requiredParam(params, "code");
  const redirectUri = requiredParam(params, "redirect_uri");
  const verifier = stringParam(params, "code_verifier");

  const row = await (await db()).authorizationCode.findUnique({ where: { digest: digest(code) } });
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

  // Respond: claim the code, then issue, in one transaction.
  try {
    return await write(async (tx) => {
      const at = now();
      const claimed = await tx.authorizationCode.updateMany({ where: { id: row.id, usedAt: null }, data: { usedAt: at } });
      if (claimed.count !== 1) throw new LostClaim();
      const live = await tx.grant.updateMany({ where: { id: row.grantId, revokedAt: null }, data: { lastUsedAt: at } });
      if (live.count !== 1) throw new LostClaim();
      const scopes = storedScopes(row.scopes);
      const record = await issueTokens(tx, { grantId: row.grantId, clientId: row.clientId, userId: row.userId, scopes, refreshScopes: scopes, ...dpopBinding(client, context), audience }, GRANT_TYPE);
      await recordEventInTx(tx, { type: "token.issued", userId: row.userId, clientId: client.clientId, detail: { grant_type: GRANT_TYPE, scope: record.scope } });
      return record;
    });
  } catch (error) {
    if (!(error instanceof LostClaim)) throw error;
    await revokeGrant(row.grantId, { type: "code.reused", detail: { concurrent: true } });
    throw new OAuthError("invalid_grant", {}, "code used concurrently; tokens issued from it revoked");
  }
}
