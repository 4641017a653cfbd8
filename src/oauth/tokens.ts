// Access and refresh tokens: opaque 256-bit random strings, stored as SHA-256 digests
// (docs/rules/tokens.md#token-values). Every token belongs to a grant (one authorization of a client by a
// user); revoking the grant revokes them all in one transaction.
// docs/rules/accounts.md#unconfirmed-accounts (account pre-hijacking): an account whose address is not
// confirmed obtains no token by any grant. Every grant issues through a statement of src/db/fast-sql.ts that
// refuses it in the transaction that would issue (unconfirmedAccount() says with which RFC 6749 error):
// startGrant below (password, implicit, client credentials), the code exchange and the device-code claim
// (src/token-endpoint/grants/authorization-code.ts, device-code.ts), and the refresh rotation, which issues
// from a token's own state and checks it in its claim (src/token-endpoint/grants/refresh-token.ts).
import { now } from "@/clock";
import { digest, randomSecret } from "@/secrets";
import { write, type Tx } from "@/db/client";
import { formatScope, storedScopes, type Scope } from "@/oauth/scope";
import { auditRow, recordEventInTx } from "@/audit/record-event";
import type { AuditDetail } from "@/audit/events";
import { startGrant as insertGrantWithTokens, tokenByValue, type NewTokenRow, type TokenByValue } from "@/db/fast-sql";
import { userUri } from "@/users/represent";
import { isPublicClient } from "@/clients/represent";
import { OAuthError } from "@/oauth/errors";
import { API_AUDIENCE, type Audience } from "@/oauth/resource";

export const ACCESS_TOKEN_TTL_SECONDS = 3600;
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;

export type TokenRecord = {
  resource_uri: string;
  access_token: string;
  refresh_token?: string;
  scopes: Scope[];
  scope: string;
  user: string;
  expires_in: number;
  /** "DPoP" when the access token is bound to the key of the request's DPoP proof (RFC 9449 5). */
  token_type: "Bearer" | "DPoP";
};

export const tokenUri = (accessToken: string) => `/api/oauth2token/${accessToken}/`;

type IssueOptions = {
  grantId: number;
  clientId: number;
  userId: number;
  /** Scopes of the access token. */
  scopes: readonly Scope[];
  /** Scopes of the refresh token (RFC 6749 6: those of the refresh token it replaces); none = no refresh token. */
  refreshScopes?: readonly Scope[] | null;
  /** RFC 9449: the DPoP key the access token is bound to (null: a bearer token)... */
  jkt?: string | null;
  /** ...and the one the refresh token is bound to (public clients' only, RFC 9449 5). */
  refreshJkt?: string | null;
  /** RFC 8707: the resource both tokens are for (docs/rules/agents.md#audience); the API when none is named. */
  audience?: Audience | null;
};

/** New token values and the rows that store their digests, not yet written. */
export type MintedTokens = { access: NewTokenRow; refresh: NewTokenRow | null; record: TokenRecord };

/** The values of a new token pair, which the caller decides to use or not. */
export type TokenSecrets = { access: string; refresh: string | undefined };

export function newSecrets(withRefresh: boolean): TokenSecrets {
  return { access: randomSecret(), refresh: withRefresh ? randomSecret() : undefined };
}

export const accessExpiry = (issuedAt: Date) => new Date(issuedAt.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000);
export const refreshExpiry = (issuedAt: Date) => new Date(issuedAt.getTime() + REFRESH_TOKEN_TTL_SECONDS * 1000);

/**
 * Makes an access token (and a refresh token) for a grant: the rows to store and the record to answer
 * (with `secrets` made earlier, when their digests went to the database first).
 */
export function mintTokens(options: IssueOptions, issuedAt = now(), secrets = newSecrets(!!options.refreshScopes)): MintedTokens {
  const row = (secret: string, scopes: readonly Scope[], expiresAt: Date, jkt: string | null): NewTokenRow => ({
    digest: digest(secret),
    grantId: options.grantId,
    clientId: options.clientId,
    userId: options.userId,
    scopes: formatScope(scopes),
    createdAt: issuedAt,
    expiresAt,
    jkt,
    audience: options.audience ?? API_AUDIENCE,
  });
  const refreshToken = options.refreshScopes ? secrets.refresh : undefined;
  const scopes = storedScopes(formatScope(options.scopes));
  return {
    access: row(secrets.access, options.scopes, accessExpiry(issuedAt), options.jkt ?? null),
    refresh: refreshToken ? row(refreshToken, options.refreshScopes!, refreshExpiry(issuedAt), options.refreshJkt ?? null) : null,
    record: {
      resource_uri: tokenUri(secrets.access),
      access_token: secrets.access,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      scopes,
      scope: formatScope(scopes),
      user: userUri(options.userId),
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      token_type: options.jkt ? "DPoP" : "Bearer",
    },
  };
}

/**
 * The refusal of a grant to an account whose address is not confirmed: RFC 6749 5.2 invalid_grant (the code,
 * the resource owner's credentials, the device code or the refresh token cannot be used), unauthorized_client
 * for client_credentials (the client may not act for its owner), access_denied for the implicit grant's
 * redirect (RFC 6749 4.2.2.1).
 */
export function unconfirmedAccount(grantType: string): OAuthError {
  const code = grantType === "implicit" ? "access_denied" : grantType === "client_credentials" ? "unauthorized_client" : "invalid_grant";
  return new OAuthError(code, {}, "the account's e-mail address is not confirmed");
}

/**
 * Starts a grant and issues its first tokens, with the token.issued audit event, in one transaction (one
 * statement on PostgreSQL: src/db/fast-sql.ts); throws, having written nothing, when the user's address
 * is not confirmed.
 */
export async function startGrant(options: {
  clientId: number;
  /** The client's public client_id, for the audit event. */
  publicClientId: string;
  userId: number;
  grantType: string;
  scopes: readonly Scope[];
  withRefreshToken: boolean;
  /** RFC 9449 binding of the access and the refresh token (see IssueOptions). */
  jkt?: string | null;
  refreshJkt?: string | null;
  audience?: Audience | null;
  /** Limiter attempts given back in the same commit (a right password's slots; docs/rules/accounts.md#limits). */
  releaseAttempts?: readonly number[];
}): Promise<TokenRecord> {
  const at = now();
  // The rows' grantId is the new grant's, which the store fills in.
  const { access, refresh, record } = mintTokens(
    {
      grantId: 0,
      clientId: options.clientId,
      userId: options.userId,
      scopes: options.scopes,
      refreshScopes: options.withRefreshToken ? options.scopes : null,
      jkt: options.jkt,
      refreshJkt: options.refreshJkt,
      audience: options.audience,
    },
    at,
  );
  const grantId = await insertGrantWithTokens({
    grant: { clientId: options.clientId, userId: options.userId, grantType: options.grantType, scopes: formatScope(options.scopes), createdAt: at },
    access,
    refresh,
    audit: auditRow({ type: "token.issued", userId: options.userId, clientId: options.publicClientId, detail: { grant_type: options.grantType, scope: record.scope } }),
    releaseAttempts: options.releaseAttempts,
  });
  if (grantId === null) throw unconfirmedAccount(options.grantType);
  return record;
}

/**
 * The audit event a revocation records (docs/rules/operations.md#audit-log), with short facts (how it was
 * asked for).
 */
export type RevocationEvent = { type: "token.revoked" | "token.reuse_detected" | "code.reused"; detail?: AuditDetail };

/**
 * Revokes a grant and every access and refresh token in it. The grant row is written first: a rotation
 * running at the same time locks the same row, so either it sees the grant revoked and rolls back, or its
 * new tokens are committed before these updates run and are revoked with the rest.
 */
export async function revokeGrantInTx(tx: Tx, grantId: number, event?: RevocationEvent): Promise<number> {
  const at = now();
  const { count } = await tx.grant.updateMany({ where: { id: grantId, revokedAt: null }, data: { revokedAt: at } });
  await tx.accessToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: at } });
  await tx.refreshToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: at } });
  // docs/rules/operations.md#audit-log: in the same transaction. A revocation is recorded when it ended
  // something; a replay (token.reuse_detected, code.reused) always, also when its grant had ended already.
  if (event && (count > 0 || event.type !== "token.revoked")) {
    const grant = await tx.grant.findUnique({ where: { id: grantId }, select: { userId: true, grantType: true, client: { select: { clientId: true } } } });
    if (grant) {
      await recordEventInTx(tx, { type: event.type, userId: grant.userId, clientId: grant.client.clientId, detail: { grant_type: grant.grantType, ...event.detail } });
    }
  }
  return count;
}

export function revokeGrant(grantId: number, event?: RevocationEvent): Promise<number> {
  return write((tx) => revokeGrantInTx(tx, grantId, event));
}

/**
 * Finds an access or refresh token by its value for revocation and introspection, looking first where
 * `token_type_hint` says (RFC 7009 2.1, RFC 7662 2.1: a wrong or unknown hint only changes the order).
 */
export function findTokenByValue(token: string, hint: string | undefined): Promise<TokenByValue | null> {
  return tokenByValue(digest(token), hint);
}

/**
 * RFC 9449 5: tokens issued with a DPoP proof are bound to its key: the access token always, the refresh
 * token only for a public client (a confidential client's refresh token is already bound to its secret).
 */
export function dpopBinding(client: { grantType: string; isPublic: boolean }, context: { jkt: string | null }) {
  return { jkt: context.jkt, refreshJkt: isPublicClient(client) ? context.jkt : null };
}
