// Who is calling an /api resource (docs/rules/endpoints.md#api-authentication, docs/rules/tokens.md#dpop):
// `Authorization: Bearer <access token>`, or `Authorization: DPoP <access token>` with a `DPoP` proof of the
// key the token is bound to (RFC 9449 7); a token in the query string or body never authenticates. Every 401
// offers both schemes, each with the resource metadata's address (RFC 9728 5.1): error="invalid_token" when a
// token was sent and is unknown, expired or revoked, or is DPoP-bound but sent as Bearer;
// error="invalid_dpop_proof" on the DPoP challenge when the proof is missing, wrong or replayed. 403
// insufficient_scope when the token lacks the scope. A bearer request pays for no JOSE work: the bound key's
// thumbprint comes with the one-statement lookup. The service's own pages may instead call with the signed-in
// user's session cookie; such a request that changes anything must carry our own Origin, else 403.
// Each resource accepts only the tokens issued for it (RFC 8707, docs/rules/agents.md#audience): /api those
// whose audience is `<APP_URL>/api`, the MCP server (src/mcp/) those for `<APP_URL>/api/mcp`; any other is 401
// invalid_token. The audience comes with the token's row from the same one-statement lookup.
import { sessionUserFromRequest } from "@/auth/session";
import { env } from "@/env";
import { ApiError, forbidden } from "@/http/errors";
import { nowMs } from "@/clock";
import { digest } from "@/secrets";
import { allows, storedScopes, type Scope } from "@/oauth/scope";
import { bearerToken as liveAccessToken, type BearerToken } from "@/db/fast-sql";
import { DPOP_ALGS, DpopProofError, verifyDpopProof } from "@/dpop/proof";
import { API_AUDIENCE, resourceMetadataUrl, type Audience } from "@/oauth/resource";

export type Principal = {
  userId: number;
  scopes: readonly Scope[];
  /** The OAuth client the token was issued to (internal id); null for the service's own pages. */
  clientId: number | null;
  via: "bearer" | "session";
  /** The authenticated user as read with the token or session (so that handlers need not read it again). */
  user: { id: number; name: string; email: string };
  /** The service's own pages, or a client the CLI marked first-party (docs/rules/tokens.md#clients). */
  firstParty: boolean;
};

const CHALLENGE = 'Bearer realm="api"';

type Scheme = "Bearer" | "DPoP";
type ChallengeError = { scheme: Scheme; error: "invalid_token" | "invalid_dpop_proof" };

/**
 * Both challenges (RFC 6750 3, RFC 9449 7.1), Bearer first, each with the resource's resource_metadata; the
 * error on the scheme it concerns.
 */
export function challenges(error: ChallengeError | null = null, audience: Audience = API_AUDIENCE): string {
  const metadata = `resource_metadata="${resourceMetadataUrl(audience)}"`;
  const errorOf = (scheme: Scheme) => (error?.scheme === scheme ? `, error="${error.error}"` : "");
  return `${CHALLENGE}, ${metadata}${errorOf("Bearer")}, DPoP realm="api", algs="${DPOP_ALGS.join(" ")}", ${metadata}${errorOf("DPoP")}`;
}

/** 401. `error` null: no credentials were sent. */
export const unauthorized = (error: ChallengeError | null, message?: string, audience: Audience = API_AUDIENCE) =>
  new ApiError(401, message ?? (error === null ? "authentication required" : error.error === "invalid_dpop_proof" ? "invalid DPoP proof" : "invalid or expired token"), {
    "WWW-Authenticate": challenges(error, audience),
  });

const invalidToken = (scheme: Scheme, audience: Audience = API_AUDIENCE) => unauthorized({ scheme, error: "invalid_token" }, undefined, audience);

export const insufficientScope = (scope: Scope) =>
  new ApiError(403, `this token lacks the ${scope} scope`, {
    "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${scope}"`,
  });

export type AccessCredentials = { scheme: Scheme; token: string };

/** The access token of a request and how it came (Bearer or DPoP); null when there is none. */
export function accessCredentials(request: Request, audience: Audience = API_AUDIENCE): AccessCredentials | null {
  const header = request.headers.get("authorization");
  if (!header) return null;
  const match = /^(Bearer|DPoP)[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  if (!match) throw invalidToken(/^dpop /i.test(header) ? "DPoP" : "Bearer", audience);
  return { scheme: match[1]!.toLowerCase() === "dpop" ? "DPoP" : "Bearer", token: match[2]! };
}

/**
 * The live access token a request presents, with the DPoP rules of RFC 9449 7: a bound token only as DPoP
 * with a valid proof of its key (carrying `ath`), an unbound one only as Bearer. Throws the 401s. A bearer
 * token read synchronously (SQLite) is answered as it is, without a promise: callers `await` it either way.
 */
export function presentedAccessToken(request: Request, credentials: AccessCredentials, audience: Audience = API_AUDIENCE): BearerToken | Promise<BearerToken> {
  // One statement: the token, its grant, its user, its client and its audience (src/db/fast-sql.ts).
  const found = liveAccessToken(digest(credentials.token), nowMs());
  return found instanceof Promise ? found.then((row) => checkedToken(request, credentials, row, audience)) : checkedToken(request, credentials, found, audience);
}

function checkedToken(request: Request, credentials: AccessCredentials, row: BearerToken | null, audience: Audience): BearerToken | Promise<BearerToken> {
  if (!row) throw invalidToken(credentials.scheme, audience);
  // RFC 8707, MCP 2025-11-25 (token audience binding): a token issued for another resource of this service is
  // refused as invalid here, never passed through (docs/rules/agents.md#audience).
  if (row.audience !== audience) throw unauthorized({ scheme: credentials.scheme, error: "invalid_token" }, "this token is for another resource", audience);
  if (credentials.scheme === "Bearer") {
    // RFC 9449 7.2: a bound token sent as a bearer token is refused; the DPoP challenge says why.
    if (row.jkt !== null) throw unauthorized({ scheme: "DPoP", error: "invalid_token" }, "this token is DPoP-bound: send it as DPoP with a proof", audience);
    return row;
  }
  if (row.jkt === null) throw invalidToken("DPoP", audience);
  return checkedProof(request, credentials, row, audience);
}

async function checkedProof(request: Request, credentials: AccessCredentials, row: BearerToken, audience: Audience): Promise<BearerToken> {
  let jkt: string;
  try {
    ({ jkt } = await verifyDpopProof(request, { accessToken: credentials.token }));
  } catch (error) {
    if (error instanceof DpopProofError) throw unauthorized({ scheme: "DPoP", error: "invalid_dpop_proof" }, undefined, audience);
    throw error;
  }
  if (jkt !== row.jkt) throw unauthorized({ scheme: "DPoP", error: "invalid_dpop_proof" }, "the DPoP proof is not signed by the token's key", audience);
  return row;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

async function sessionPrincipal(request: Request): Promise<Principal | null> {
  const user = await sessionUserFromRequest(request);
  if (!user) return null;
  if (!SAFE_METHODS.has(request.method) && request.headers.get("origin") !== new URL(env().appUrl).origin) {
    throw forbidden("cross-origin request refused: send a bearer token");
  }
  return { userId: user.id, scopes: ["readonly", "readwrite"], clientId: null, via: "session", user, firstParty: true };
}

/**
 * Authenticates a request and checks that it carries `scope`. Throws the 401/403s; a bearer token read
 * synchronously is answered without a promise (callers `await` it either way).
 */
export function authenticate(request: Request, scope: Scope): Principal | Promise<Principal> {
  const credentials = accessCredentials(request);
  if (credentials === null) return sessionAuthenticate(request);
  const row = presentedAccessToken(request, credentials);
  return row instanceof Promise ? row.then((found) => bearerPrincipal(found, scope)) : bearerPrincipal(row, scope);
}

/**
 * The principal of a token presented to another resource of this service than /api (the MCP server): a token
 * only (no session cookie), for that audience, with that resource's challenges in every 401. The scope check
 * is the caller's (which scope a call needs depends on what it asks for).
 */
export async function authenticateToken(request: Request, audience: Audience): Promise<Principal> {
  const credentials = accessCredentials(request, audience);
  if (credentials === null) throw unauthorized(null, undefined, audience);
  return bearerPrincipal(await presentedAccessToken(request, credentials, audience), "readonly");
}

async function sessionAuthenticate(request: Request): Promise<Principal> {
  const viaSession = await sessionPrincipal(request);
  if (viaSession) return viaSession;
  throw unauthorized(null);
}

// A token's stored scope string is one of a handful (formatScope() writes them in one order): each parsed once.
const parsedScopes = new Map<string, readonly Scope[]>();
function tokenScopes(stored: string): readonly Scope[] {
  let scopes = parsedScopes.get(stored);
  if (scopes === undefined) {
    scopes = Object.freeze(storedScopes(stored));
    if (parsedScopes.size < 64) parsedScopes.set(stored, scopes);
  }
  return scopes;
}

// A token the cache answers is one row object for every request it answers (src/db/fast-sql.ts): so is its
// principal, made once and frozen like the row, and with it the user's own representation (src/users/get-user.ts).
const principals = new WeakMap<BearerToken, Principal>();

function bearerPrincipal(row: BearerToken, scope: Scope): Principal {
  let principal = principals.get(row);
  if (principal === undefined) {
    principal = Object.freeze({
      userId: row.userId,
      scopes: tokenScopes(row.scopes),
      clientId: row.clientId,
      via: "bearer",
      user: Object.freeze({ id: row.userId, name: row.userName, email: row.userEmail }),
      firstParty: row.firstParty,
    });
    principals.set(row, principal);
  }
  if (!allows(principal.scopes, scope)) throw insufficientScope(scope);
  return principal;
}

/**
 * The service's own pages, or a client the CLI marked first-party (docs/rules/tokens.md#clients): read with
 * the token.
 */
export function isFirstParty(principal: Principal): boolean {
  return principal.firstParty;
}
