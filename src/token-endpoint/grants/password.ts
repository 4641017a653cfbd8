// RFC 6749 4.3: Resource Owner Password Credentials Grant.
//
// docs/rules/tokens.md#password-grant: the password grant is for a client that accesses only its own owner's
// data, so the token authenticates only the user who owns the client. Another user's correct password is
// invalid_grant, like a wrong one (RFC 6749 5.2). Unknown e-mails cost the same hashing time as known ones.
// Failures are counted per client and e-mail (10 in 15 minutes) and per client across all usernames (30 in 15
// minutes: the client serves its owner alone); while either is reached the grant answers 429 rate_limited,
// even for the right password, until the window passes. Each attempt takes its slots before the password hash,
// in one atomic step (src/limits/limiter.ts), so that a burst sent at once passes at most the limit; the slots
// are given back when the password was right (in the grant's commit) or the hash could not be done
// (docs/rules/accounts.md#limits). The user is read with the reservation (one statement on PostgreSQL), so a
// password grant makes two round trips besides its hash: that one, and the grant's commit.
import type { Client } from "@/generated/sqlite/client";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";
import { reserveWithUser, type Limit } from "@/limits/limiter";
import { recordEvent } from "@/audit/record-event";
import { parseScope, type Scope } from "@/oauth/scope";
import { dpopBinding, startGrant, type TokenRecord } from "@/oauth/tokens";
import type { GrantContext } from "@/token-endpoint/grants/grant";
import { verifyPassword } from "@/users/passwords";

export const GRANT_TYPE = "password";

const WINDOW_MS = 15 * 60 * 1000;
/** Failures per client and username. */
export const PASSWORD_LIMIT_PER_USERNAME: Limit = { max: 10, windowMs: WINDOW_MS };
/** Failures per client, across all usernames. */
export const PASSWORD_LIMIT_PER_CLIENT: Limit = { max: 30, windowMs: WINDOW_MS };

/** RFC 6749 3.3: a request without scope gets this pre-defined default (least privilege). */
export const DEFAULT_PASSWORD_SCOPES: Scope[] = ["readonly"];

export async function passwordGrant(client: Client, params: Record<string, unknown>, context: GrantContext): Promise<TokenRecord> {
  // Validate
  // A client that registered itself has no owner whose password it could take
  // (docs/rules/tokens.md#dynamic-registration).
  if (client.grantType !== GRANT_TYPE || client.ownerId === null) throw new OAuthError("unauthorized_client");
  const username = requiredParam(params, "username").trim().toLowerCase();
  const password = requiredParam(params, "password");
  const scopes = parseScope(stringParam(params, "scope")) ?? DEFAULT_PASSWORD_SCOPES;

  // The reservation brings the user with it (on PostgreSQL in the same statement), also when refused: the
  // rate_limited event names them.
  const reserved = await reserveWithUser([
    { key: `password:${client.clientId}:${username}`, limit: PASSWORD_LIMIT_PER_USERNAME },
    { key: `password-client:${client.clientId}`, limit: PASSWORD_LIMIT_PER_CLIENT },
  ], username, { waitForInFlight: true });
  const { user } = reserved;
  if ("refusal" in reserved) {
    await recordEvent({ type: "rate_limited", userId: user?.id ?? null, clientId: client.clientId, detail: { limit: "password grant" } });
    throw reserved.refusal;
  }
  const taken = reserved.reservation;
  let passwordOk: boolean;
  try {
    passwordOk = await verifyPassword(user?.passwordHash ?? null, password);
  } catch (error) {
    await taken.release(); // not decided (the hashing pool is full, the database failed): not counted
    throw error;
  }
  if (!user || !passwordOk || user.id !== client.ownerId) {
    taken.keep(); // a failure: counted
    throw new OAuthError("invalid_grant", {}, "bad resource owner credentials");
  }
  // Respond: the right password's slots are given back in the grant's own commit (or, should it fail, alone).
  let record: TokenRecord;
  try {
    record = await startGrant({ clientId: client.id, publicClientId: client.clientId, userId: user.id, grantType: GRANT_TYPE, scopes, withRefreshToken: true, ...dpopBinding(client, context), audience: context.audience, releaseAttempts: taken.ids });
  } catch (error) {
    await taken.release();
    throw error;
  }
  taken.releasedInTx();
  return record;
}
