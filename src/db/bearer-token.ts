// What a valid access token stands for, as a bearer read answers it (src/db/fast-sql.ts) and the
// validated-token cache keeps it (src/db/pg-token-cache.ts).
export type BearerToken = {
  readonly userId: number;
  readonly clientId: number;
  readonly scopes: string;
  readonly userName: string;
  readonly userEmail: string;
  readonly firstParty: boolean;
  /** The DPoP key the token is bound to (RFC 9449 6), or null for a bearer token. */
  readonly jkt: string | null;
  /** The resource the token is for (RFC 8707), as a path of APP_URL: "/api" or "/api/mcp". */
  readonly audience: string;
};
