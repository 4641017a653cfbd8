// RFC 6749 4.3: Resource Owner Password Credentials Grant.
//
// SPEC.md 5.4: the password grant is for a client that accesses only its own owner's data, so the token
// authenticates only the user who owns the client. Another user's correct password is invalid_grant, like a
// wrong one (RFC 6749 5.2). Unknown e-mails cost the same hashing time as known ones. Failures are counted
// per client and e-mail; after MAX_FAILURES in the window the grant answers 429 rate_limited, even for the
// right password, until the window passes (CONTRACT.md 4).
import type { Client } from "@/generated/sqlite/client";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";
import { assertNotLimited, recordFailure } from "@/oauth/rate-limit";
import { parseScope, type Scope } from "@/oauth/scope";
import { userByEmail } from "@/server/fast-sql";
import { startGrant, type TokenRecord } from "@/oauth/tokens";
import { verifyPassword } from "@/users/passwords";

export const GRANT_TYPE = "password";

/** RFC 6749 3.3: a request without scope gets this pre-defined default (least privilege). */
export const DEFAULT_PASSWORD_SCOPES: Scope[] = ["readonly"];

export async function passwordGrant(client: Client, params: Record<string, unknown>): Promise<TokenRecord> {
  // Validate
  if (client.grantType !== GRANT_TYPE) throw new OAuthError("unauthorized_client");
  const username = requiredParam(params, "username").trim().toLowerCase();
  const password = requiredParam(params, "password");
  const scopes = parseScope(stringParam(params, "scope")) ?? DEFAULT_PASSWORD_SCOPES;

  const limitKey = `password:${client.clientId}:${username}`;
  await assertNotLimited(limitKey);
  const user = await userByEmail(username); // one statement (src/server/fast-sql.ts)
  const passwordOk = await verifyPassword(user?.passwordHash ?? null, password);
  if (!user || !passwordOk || user.id !== client.ownerId) {
    await recordFailure(limitKey);
    throw new OAuthError("invalid_grant", {}, "bad resource owner credentials");
  }

  // Respond
  return startGrant({ clientId: client.id, publicClientId: client.clientId, userId: user.id, grantType: GRANT_TYPE, scopes, withRefreshToken: true });
}
