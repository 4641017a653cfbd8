// The device authorization endpoint, POST /api/connect/oauth2/device/ (RFC 8628 3.1 and 3.2, CONTRACT.md 10).
// A client of the device_code grant (public, or confidential and authenticated as at the token endpoint)
// asks for a device code and a user code; the person types the user code at verification_uri (/device).
// The device code is stored only as its SHA-256 digest.
import { now } from "@/clock";
import { env } from "@/env";
import { readBody } from "@/http/body";
import { json, NO_STORE } from "@/http/respond";
import { digest, randomSecret } from "@/server/crypto";
import { write } from "@/server/db";
import { authenticateClient } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { stringParam } from "@/oauth/params";
import { formatScope, parseScope, type Scope } from "@/oauth/scope";
import { formatUserCode, generateUserCode } from "@/device/user-code";

export const DEVICE_CODE_TTL_SECONDS = 600;
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
/** Without `scope`, the least privilege, as for the password grant (RFC 6749 3.3 allows a default). */
const DEFAULT_SCOPES: Scope[] = ["readonly"];

const isUniqueViolation = (error: unknown) => (error as { code?: unknown } | null)?.code === "P2002";

export async function handleDeviceAuthorizationRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  const client = await authenticateClient(request, params);
  if (client.grantType !== "device_code") throw new OAuthError("unauthorized_client");
  const scopes = parseScope(stringParam(params, "scope")) ?? DEFAULT_SCOPES;

  const deviceCode = randomSecret();
  // A user code that an unexpired or not yet pruned request holds is taken (unique index): draw again.
  for (let attempt = 0; ; attempt++) {
    const userCode = generateUserCode();
    try {
      await write((tx) => {
        const at = now();
        return tx.deviceAuthorization.create({
          data: {
            deviceCodeDigest: digest(deviceCode),
            userCode,
            clientId: client.id,
            scopes: formatScope(scopes),
            interval: DEVICE_POLL_INTERVAL_SECONDS,
            createdAt: at,
            expiresAt: new Date(at.getTime() + DEVICE_CODE_TTL_SECONDS * 1000),
          },
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
      if (!isUniqueViolation(error) || attempt >= 4) throw error;
    }
  }
}
