// Access and refresh tokens: opaque 256-bit random strings, stored as SHA-256 digests (CONTRACT.md 4).
// Every token belongs to a grant (one authorization of a client by a user); revoking the grant revokes them
// all in one transaction.
import { now } from "@/clock";
import { digest, randomSecret } from "@/server/crypto";
import { db, write, type Tx } from "@/server/db";
import { formatScope, storedScopes, type Scope } from "@/oauth/scope";
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

/** Creates an access token (and a refresh token) inside the caller's transaction. */
export async function issueTokens(tx: Tx, options: IssueOptions): Promise<TokenRecord> {
  const issuedAt = now();
  const accessToken = randomSecret();
  await tx.accessToken.create({
    data: {
      digest: digest(accessToken),
      grantId: options.grantId,
      clientId: options.clientId,
      userId: options.userId,
      scopes: formatScope(options.scopes),
      createdAt: issuedAt,
      expiresAt: new Date(issuedAt.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000),
    },
  });
  let refreshToken: string | undefined;
  if (options.refreshScopes) {
    refreshToken = randomSecret();
    await tx.refreshToken.create({
      data: {
        digest: digest(refreshToken),
        grantId: options.grantId,
        clientId: options.clientId,
        userId: options.userId,
        scopes: formatScope(options.refreshScopes),
        createdAt: issuedAt,
        expiresAt: new Date(issuedAt.getTime() + REFRESH_TOKEN_TTL_SECONDS * 1000),
      },
    });
  }
  const scopes = storedScopes(formatScope(options.scopes));
  return {
    resource_uri: tokenUri(accessToken),
    access_token: accessToken,
    ...(refreshToken ? { refresh_token: refreshToken } : {}),
    scopes,
    scope: formatScope(scopes),
    user: userUri(options.userId),
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    token_type: "Bearer",
  };
}

/** Starts a grant and issues its first tokens, in one transaction. */
export async function startGrant(options: {
  clientId: number;
  userId: number;
  grantType: string;
  scopes: readonly Scope[];
  withRefreshToken: boolean;
}): Promise<TokenRecord> {
  return write(async (tx) => {
    const at = now();
    const grant = await tx.grant.create({
      data: {
        clientId: options.clientId,
        userId: options.userId,
        grantType: options.grantType,
        scopes: formatScope(options.scopes),
        createdAt: at,
        lastUsedAt: at,
      },
    });
    return issueTokens(tx, {
      grantId: grant.id,
      clientId: options.clientId,
      userId: options.userId,
      scopes: options.scopes,
      refreshScopes: options.withRefreshToken ? options.scopes : null,
    });
  });
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

/** The stored access token for a presented value, if it exists and is neither expired nor revoked. */
export async function findActiveAccessToken(token: string) {
  const row = await (await db()).accessToken.findUnique({ where: { digest: digest(token) } });
  if (!row || row.revokedAt || row.expiresAt <= now()) return null;
  return row;
}

/**
 * Finds an access or refresh token by its value for revocation and introspection, looking first where
 * `token_type_hint` says (RFC 7009 2.1, RFC 7662 2.1: a wrong or unknown hint only changes the order).
 */
export async function findTokenByValue(token: string, hint: string | undefined) {
  const client = await db();
  const where = { digest: digest(token) };
  const include = { user: { select: { id: true, email: true } } } as const;
  const access = () => client.accessToken.findUnique({ where, include }).then((row) => row && { ...row, kind: "access_token" as const, usedAt: null });
  const refresh = () => client.refreshToken.findUnique({ where, include }).then((row) => row && { ...row, kind: "refresh_token" as const });
  const [first, second] = hint === "refresh_token" ? [refresh, access] : [access, refresh];
  return (await first()) ?? (await second());
}
