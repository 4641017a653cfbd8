// Dynamic client registration, POST /api/connect/oauth2/register/ (RFC 7591 3,
// docs/rules/tokens.md#dynamic-registration), governed by REGISTRATION: `off` (404), `token` (an initial
// access token from `registration:token`, sent as a bearer; single use: the registration it allows claims it,
// first, in the transaction that creates the client, so that a refused registration leaves it usable), `open`
// (anyone; such clients are marked unverified). Registrations are limited per client address (20 an hour; an
// IPv6 address counts by its /64): the slot is taken in the transaction that creates the client, before
// anything else in it (src/limits/limiter.ts), so that it counts exactly the registrations made and a burst
// sent at once passes at most 20. The answer is 201 with the client information (RFC 7591 3.2.1): the secret
// and the registration access token are shown this once; only their digests are stored. A registered client
// has no owner.
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { env } from "@/env";
import { recordEvent, recordEventInTx } from "@/audit/record-event";
import { ApiError, notFound } from "@/http/errors";
import { readBody } from "@/http/body";
import { clientAddress } from "@/http/client-address";
import { json, NO_STORE } from "@/http/respond";
import { addressKey, isRateLimited, reserveInTx, type Limit } from "@/limits/limiter";
import { digest, randomSecret } from "@/secrets";
import { db, write } from "@/db/client";
import { clientInformation, parseClientMetadata, registrationClientUri } from "@/registration/client-metadata";

export const REGISTRATION_LIMIT: Limit = { max: 20, windowMs: 60 * 60 * 1000 };
export const INITIAL_ACCESS_TOKEN_TTL_SECONDS = 24 * 3600;

/** 401 for a missing, unknown, used or expired initial access token (RFC 6750 3.1). */
const invalidToken = (sent: boolean) =>
  new ApiError(401, "invalid_token", { "WWW-Authenticate": sent ? 'Bearer error="invalid_token"' : 'Bearer realm="registration"' });

function initialAccessToken(request: Request): string | null {
  const header = request.headers.get("authorization");
  if (!header) return null;
  const match = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)\s*$/i.exec(header);
  if (!match) throw invalidToken(true);
  return match[1]!;
}

class TokenLost extends Error {}

export async function handleRegistrationRequest(request: Request): Promise<Response> {
  const mode = env().registration;
  if (mode === "off") throw notFound("registration is off");
  const token = initialAccessToken(request);
  if (mode === "token" && token === null) throw invalidToken(false);
  const tokenDigest = token === null ? null : digest(token);
  if (tokenDigest !== null) {
    const row = await (await db()).registrationToken.findUnique({ where: { digest: tokenDigest } });
    if (!row || row.usedAt || row.expiresAt <= now()) throw invalidToken(true);
  }
  const limitKey = `register:${addressKey(clientAddress(request))}`;

  const body = await readBody(request, { invalidMessage: "invalid_client_metadata" });
  const metadata = await parseClientMetadata(body);
  // A private_key_jwt client proves itself with its keys and gets no secret (docs/rules/tokens.md#client-assertions).
  const secret = metadata.isPublic || metadata.tokenEndpointAuthMethod === "private_key_jwt" ? null : randomSecret();
  const registrationAccessToken = randomSecret();
  let client: Client;
  try {
    client = await write(async (tx) => {
      // First: the limit (on SQLite this insert takes the write lock for the whole transaction).
      await reserveInTx(tx, [{ key: limitKey, limit: REGISTRATION_LIMIT }]);
      const at = now();
      if (tokenDigest !== null) {
        const claimed = await tx.registrationToken.updateMany({ where: { digest: tokenDigest, usedAt: null, expiresAt: { gt: at } }, data: { usedAt: at } });
        if (claimed.count !== 1) throw new TokenLost();
      }
      const created = await tx.client.create({
        data: {
          clientId: randomSecret(16),
          name: metadata.name,
          ownerId: null,
          grantType: metadata.grantType,
          isPublic: metadata.isPublic,
          secretDigest: secret ? digest(secret) : null,
          redirectUris: JSON.stringify(metadata.redirectUris),
          createdAt: at,
          requirePar: metadata.requirePar,
          registeredVia: tokenDigest !== null ? "token" : "open",
          registrationTokenDigest: digest(registrationAccessToken),
          tokenEndpointAuthMethod: metadata.tokenEndpointAuthMethod,
          scope: metadata.scope,
          clientUri: metadata.clientUri,
          logoUri: metadata.logoUri,
          jwks: metadata.jwks,
          postLogoutRedirectUris: JSON.stringify(metadata.postLogoutRedirectUris),
          backchannelLogoutUri: metadata.backchannelLogoutUri,
          applicationType: metadata.applicationType,
        },
      });
      await recordEventInTx(tx, {
        type: "client.created",
        clientId: created.clientId,
        detail: { via: "registration", registration: tokenDigest !== null ? "token" : "open", grant_type: metadata.grantType },
      });
      return created;
    });
  } catch (error) {
    if (error instanceof TokenLost) throw invalidToken(true); // used up by a registration racing this one
    // Every limiter's refusal is an audit event (the route context holds the address).
    if (isRateLimited(error)) await recordEvent({ type: "rate_limited", detail: { limit: "registration" } });
    throw error;
  }
  return json(clientInformation(client, { clientSecret: secret, registrationAccessToken }), 201, {
    ...NO_STORE,
    Location: registrationClientUri(client.clientId),
  });
}

/** A new initial access token for REGISTRATION=token (the CLI's registration:token): shown once. */
export async function createRegistrationToken(): Promise<{ token: string; expires_at: string }> {
  const token = randomSecret();
  const at = now();
  const expiresAt = new Date(at.getTime() + INITIAL_ACCESS_TOKEN_TTL_SECONDS * 1000);
  await write((tx) => tx.registrationToken.create({ data: { digest: digest(token), createdAt: at, expiresAt } }));
  return { token, expires_at: expiresAt.toISOString() };
}
