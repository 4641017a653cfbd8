// Access and refresh tokens: opaque 256-bit random strings, stored as SHA-256 digests (CONTRACT.md 4).
// Every token belongs to a grant (one authorization of a client by a user); revoking the grant revokes them
// all in one transaction.
import { now } from "@/clock";
import { digest, randomSecret } from "@/server/crypto";
import { write, type Tx } from "@/server/db";
import { formatScope, storedScopes, type Scope } from "@/oauth/scope";
import { auditRow } from "@/audit/record-event";
import { startGrant as insertGrantWithTokens, tokenByValue, type NewTokenRow, type TokenByValue } from "@/server/fast-sql";
import { userUri } from "@/users/represent";

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
  token_type: "Bearer";
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
  const row = (secret: string, scopes: readonly Scope[], expiresAt: Date): NewTokenRow => ({
    digest: digest(secret),
    grantId: options.grantId,
    clientId: options.clientId,
    userId: options.userId,
    scopes: formatScope(scopes),
    createdAt: issuedAt,
    expiresAt,
  });
  const refreshToken = options.refreshScopes ? secrets.refresh : undefined;
  const scopes = storedScopes(formatScope(options.scopes));
  return {
    access: row(secrets.access, options.scopes, accessExpiry(issuedAt)),
    refresh: refreshToken ? row(refreshToken, options.refreshScopes!, refreshExpiry(issuedAt)) : null,
    record: {
      resource_uri: tokenUri(secrets.access),
      access_token: secrets.access,
      ...(refreshToken ? { refresh_token: refreshToken } : {}),
      scopes,
      scope: formatScope(scopes),
      user: userUri(options.userId),
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      token_type: "Bearer",
    },
  };
}

/** Creates an access token (and a refresh token) inside the caller's transaction. */
export async function issueTokens(tx: Tx, options: IssueOptions): Promise<TokenRecord> {
  const minted = mintTokens(options);
  await tx.accessToken.create({ data: minted.access });
  if (minted.refresh) await tx.refreshToken.create({ data: minted.refresh });
  return minted.record;
}

/**
 * Starts a grant and issues its first tokens, with the token.issued audit event, in one transaction (one
 * statement on PostgreSQL: src/server/fast-sql.ts).
 */
export async function startGrant(options: {
  clientId: number;
  /** The client's public client_id, for the audit event. */
  publicClientId: string;
  userId: number;
  grantType: string;
  scopes: readonly Scope[];
  withRefreshToken: boolean;
}): Promise<TokenRecord> {
  const at = now();
  // The rows' grantId is the new grant's, which the store fills in.
  const { access, refresh, record } = mintTokens(
    { grantId: 0, clientId: options.clientId, userId: options.userId, scopes: options.scopes, refreshScopes: options.withRefreshToken ? options.scopes : null },
    at,
  );
  await insertGrantWithTokens({
    grant: { clientId: options.clientId, userId: options.userId, grantType: options.grantType, scopes: formatScope(options.scopes), createdAt: at },
    access,
    refresh,
    audit: auditRow({ type: "token.issued", userId: options.userId, clientId: options.publicClientId, detail: { grant_type: options.grantType, scope: record.scope } }),
  });
  return record;
}

/**
 * Revokes a grant and every access and refresh token in it. The grant row is written first: a rotation
 * running at the same time locks the same row, so either it sees the grant revoked and rolls back, or its
 * new tokens are committed before these updates run and are revoked with the rest.
 */
export async function revokeGrantInTx(tx: Tx, grantId: number): Promise<number> {
  const at = now();
  const { count } = await tx.grant.updateMany({ where: { id: grantId, revokedAt: null }, data: { revokedAt: at } });
  await tx.accessToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: at } });
  await tx.refreshToken.updateMany({ where: { grantId, revokedAt: null }, data: { revokedAt: at } });
  return count;
}

export function revokeGrant(grantId: number): Promise<number> {
  return write((tx) => revokeGrantInTx(tx, grantId));
}

/**
 * Finds an access or refresh token by its value for revocation and introspection, looking first where
 * `token_type_hint` says (RFC 7009 2.1, RFC 7662 2.1: a wrong or unknown hint only changes the order).
 */
export function findTokenByValue(token: string, hint: string | undefined): Promise<TokenByValue | null> {
  return tokenByValue(digest(token), hint);
}
