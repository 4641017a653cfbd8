// Who is calling an /api resource (CONTRACT.md 1): `Authorization: Bearer <access token>`; a token in the
// query string or body never authenticates. 401 with a Bearer challenge when there is no valid token
// (error="invalid_token" when one was sent), 403 insufficient_scope when the token lacks the scope.
// The service's own pages may instead call with the signed-in user's session cookie; such a request that
// changes anything must carry our own Origin, else 403.
import { sessionUserFromRequest } from "@/auth/session";
import { env } from "@/env";
import { ApiError, forbidden } from "@/http/errors";
import { now } from "@/clock";
import { digest } from "@/server/crypto";
import { allows, storedScopes, type Scope } from "@/oauth/scope";
import { bearerToken as liveAccessToken } from "@/server/fast-sql";

export type Principal = {
  userId: number;
  scopes: Scope[];
  /** The OAuth client the token was issued to (internal id); null for the service's own pages. */
  clientId: number | null;
  via: "bearer" | "session";
  /** The authenticated user as read with the token or session (so that handlers need not read it again). */
  user: { id: number; name: string; email: string };
  /** The service's own pages, or a client the CLI marked first-party (CONTRACT.md 2). */
  firstParty: boolean;
};

const CHALLENGE = 'Bearer realm="api"';

export const unauthorized = (tokenSent: boolean) =>
  new ApiError(401, tokenSent ? "invalid or expired token" : "authentication required", {
    "WWW-Authenticate": tokenSent ? `${CHALLENGE}, error="invalid_token"` : CHALLENGE,
  });

export const insufficientScope = (scope: Scope) =>
  new ApiError(403, `this token lacks the ${scope} scope`, {
    "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${scope}"`,
  });

/** The bearer token of a request; null when there is none; undefined-free. */
export function bearerToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (!header) return null;
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  if (!match) throw unauthorized(true);
  return match[1]!;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

async function sessionPrincipal(request: Request): Promise<Principal | null> {
  if (!request.headers.has("cookie")) return null;
  const user = await sessionUserFromRequest(request);
  if (!user) return null;
  if (!SAFE_METHODS.has(request.method) && request.headers.get("origin") !== new URL(env().appUrl).origin) {
    throw forbidden("cross-origin request refused: send a bearer token");
  }
  return { userId: user.id, scopes: ["readonly", "readwrite"], clientId: null, via: "session", user, firstParty: true };
}

/** Authenticates a request and checks that it carries `scope`. */
export async function authenticate(request: Request, scope: Scope): Promise<Principal> {
  const token = bearerToken(request);
  if (token === null) {
    const viaSession = await sessionPrincipal(request);
    if (viaSession) return viaSession;
    throw unauthorized(false);
  }
  // One statement: the token, its grant, its user and its client (src/server/fast-sql.ts).
  const row = await liveAccessToken(digest(token), now());
  if (!row) throw unauthorized(true);
  const principal: Principal = {
    userId: row.userId,
    scopes: storedScopes(row.scopes),
    clientId: row.clientId,
    via: "bearer",
    user: { id: row.userId, name: row.userName, email: row.userEmail },
    firstParty: row.firstParty,
  };
  if (!allows(principal.scopes, scope)) throw insufficientScope(scope);
  return principal;
}

/** The service's own pages, or a client the CLI marked first-party (CONTRACT.md 2): read with the token. */
export function isFirstParty(principal: Principal): boolean {
  return principal.firstParty;
}
