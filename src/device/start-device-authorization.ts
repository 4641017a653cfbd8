// The device authorization endpoint, POST /api/connect/oauth2/device/ (RFC 8628 3.1 and 3.2,
// docs/rules/tokens.md#device-flow). A client of the device_code grant (public, or confidential and
// authenticated as at the token endpoint) asks for a device code and a user code; the person types the user
// code at verification_uri (/device). A client registered with a `scope` asks for those only
// (docs/rules/tokens.md#scopes-of-registered-clients; without `scope`, the default readonly must be among them). The device code is stored only as its SHA-256 digest. A client holds at
// most MAX_LIVE_DEVICE_AUTHORIZATIONS unexpired device authorizations (then 429 rate_limited, Retry-After
// until the first of them expires; docs/rules/accounts.md#limits): counted and inserted in one transaction
// serialised per client (src/limits/limiter.ts), so that a burst cannot pass the cap.
import { now } from "@/clock";
import { env } from "@/env";
import { readBody } from "@/http/body";
import { json, NO_STORE } from "@/http/respond";
import { digest, randomSecret } from "@/secrets";
import { write } from "@/db/client";
import { recordEvent } from "@/audit/record-event";
import { assertUnderCapInTx, isRateLimited, lockKeysInTx } from "@/limits/limiter";
import { authenticateClient } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { stringParam } from "@/oauth/params";
import { assertWithinRegisteredScope, formatScope, parseScope, type Scope } from "@/oauth/scope";
import { formatUserCode, generateUserCode } from "@/device/user-code";

export const DEVICE_CODE_TTL_SECONDS = 600;
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
/** Unexpired device authorizations per client. */
export const MAX_LIVE_DEVICE_AUTHORIZATIONS = 100;
/** Without `scope`, the least privilege, as for the password grant (RFC 6749 3.3 allows a default). */
const DEFAULT_SCOPES: Scope[] = ["readonly"];

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === "P2002";

export async function handleDeviceAuthorizationRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  const client = await authenticateClient(request, params);
  if (client.grantType !== "device_code") throw new OAuthError("unauthorized_client");
  const scopes = parseScope(stringParam(params, "scope")) ?? DEFAULT_SCOPES;
  // docs/rules/tokens.md#scopes-of-registered-clients: the default too.
  assertWithinRegisteredScope(scopes, client.scope);

  const deviceCode = randomSecret();
  // A user code that an unexpired or not yet pruned request holds is taken (unique index): draw again.
  for (let attempt = 0; ; attempt++) {
    const userCode = generateUserCode();
    try {
      await write(async (tx) => {
        // PostgreSQL: one client's inserts one at a time; SQLite: the insert below is the first statement and
        // takes the write lock.
        await lockKeysInTx(tx, [`device-authorizations:${client.id}`]);
        const at = now();
        const created = await tx.deviceAuthorization.create({
          data: {
            deviceCodeDigest: digest(deviceCode),
            userCode,
            clientId: client.id,
            scopes: formatScope(scopes),
            interval: DEVICE_POLL_INTERVAL_SECONDS,
            createdAt: at,
            expiresAt: new Date(at.getTime() + DEVICE_CODE_TTL_SECONDS * 1000),
          },
          select: { id: true },
        });
        const live = { clientId: client.id, expiresAt: { gt: at }, id: { not: created.id } };
        await assertUnderCapInTx({
          max: MAX_LIVE_DEVICE_AUTHORIZATIONS,
          live: () => tx.deviceAuthorization.count({ where: live }),
          ends: async () => (await tx.deviceAuthorization.findFirst({ where: live, orderBy: { expiresAt: "asc" }, select: { expiresAt: true } }))?.expiresAt ?? null,
        });
      });
      const verificationUri = `${env().appUrl}/device`;
      return json(
        {
          device_code: deviceCode,
          user_code: formatUserCode(userCode),
          verification_uri: verificationUri,
          verification_uri_complete: `${verificationUri}?user_code=${formatUserCode(userCode)}`,
          expires_in: DEVICE_CODE_TTL_SECONDS,
          interval: DEVICE_POLL_INTERVAL_SECONDS,
        },
        200,
        NO_STORE,
      );
    } catch (error) {
      if (isRateLimited(error)) await recordEvent({ type: "rate_limited", clientId: client.clientId, detail: { limit: "device authorizations" } });
      if (!isUniqueViolation(error) || attempt >= 4) throw error;
    }
  }
}
