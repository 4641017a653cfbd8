// RFC 6749 error codes (sections 4.1.2.1, 4.2.2.1 and 5.2), OpenID Connect Core 3.1.2.6 (prompt=none),
// RFC 8628 3.5 (device polling), RFC 6750 3.1 (UserInfo), RFC 8707 2 (invalid_target), RFC 9449 5
// (invalid_dpop_proof), RFC 7591 3.2.2 (registration), RFC 9126 2.3 (PAR) and OpenID Connect Core 3.1.2.6
// (request objects: docs/rules/openid-connect.md#request-objects), each with the status this service answers with.
// The error body is {"error": code} and nothing else (docs/rules/endpoints.md#error-bodies).
import { ApiError } from "@/http/errors";

export const OAUTH_ERROR_STATUS = {
  invalid_request: 400,
  invalid_client: 401,
  invalid_grant: 400,
  unauthorized_client: 400,
  unsupported_grant_type: 400,
  invalid_scope: 400,
  access_denied: 403,
  unsupported_response_type: 400,
  server_error: 500,
  temporarily_unavailable: 503,
  login_required: 400,
  consent_required: 400,
  authorization_pending: 400,
  slow_down: 400,
  expired_token: 400,
  invalid_token: 401,
  insufficient_scope: 403,
  invalid_target: 400,
  invalid_dpop_proof: 400,
  invalid_redirect_uri: 400,
  invalid_client_metadata: 400,
  invalid_request_uri: 400,
  request_not_supported: 400,
  request_uri_not_supported: 400,
} as const;

export type OAuthErrorCode = keyof typeof OAUTH_ERROR_STATUS;

export class OAuthError extends ApiError {
  override name = "OAuthError";
  constructor(
    readonly code: OAuthErrorCode,
    headers: Record<string, string> = {},
    /** For the log only; never sent to the client. */
    readonly detail?: string,
  ) {
    super(OAUTH_ERROR_STATUS[code], code, headers);
  }
}

export const oauthError = (code: OAuthErrorCode, detail?: string) => new OAuthError(code, {}, detail);
