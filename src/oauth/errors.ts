// RFC 6749 error codes (sections 4.1.2.1, 4.2.2.1 and 5.2), each with the status this service answers with.
// The error body is {"error": code} and nothing else (CONTRACT.md 1).
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
