// Errors a request can end in. Every one becomes {"error": "<string>"} with its status
// (docs/rules/endpoints.md#error-bodies); anything else thrown is a server_error whose details go only to the
// log.
import { controlCharacterMessage } from "@/http/input-text";

export class ApiError extends Error {
  override name = "ApiError";
  constructor(
    readonly status: number,
    readonly error: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(error);
  }
}

/**
 * A parameter refused by the input rule (src/http/input-text.ts): a 400 naming the field
 * ("name: must not contain control characters"), or `code` where the endpoint answers an error code; on an
 * OAuth endpoint (route() kind "oauth") without a code of its own it is answered as invalid_request.
 */
export class InputError extends ApiError {
  override name = "InputError";
  constructor(
    readonly field: string,
    code?: string,
  ) {
    super(400, code ?? controlCharacterMessage(field));
  }
}

// Function declarations rather than arrow functions held in constants: a mutant of their body then takes effect
// in the test that calls them, not only while the module loads (docs/testing.md#mutation-testing).
export function badRequest(message: string): ApiError {
  return new ApiError(400, message);
}
export function notFound(message = "not found"): ApiError {
  return new ApiError(404, message);
}
export function forbidden(message = "forbidden", headers: Record<string, string> = {}): ApiError {
  return new ApiError(403, message, headers);
}
export function conflict(message: string): ApiError {
  return new ApiError(409, message);
}
export function gone(message: string): ApiError {
  return new ApiError(410, message);
}
export function tooManyRequests(retryAfterSeconds: number, message = "rate_limited"): ApiError {
  return new ApiError(429, message, { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) });
}
export function methodNotAllowed(allow: string[], message = "method not allowed"): ApiError {
  return new ApiError(405, message, { Allow: allow.join(", ") });
}

/**
 * Too much work of one kind already waiting (password hashing, src/users/passwords.ts): refused at once with
 * 503 and `Retry-After: 1` rather than queued behind the others (docs/rules/accounts.md#password-hashing). At
 * an OAuth endpoint the body is {"error": "temporarily_unavailable"} (RFC 6749 4.1.2.1; src/http/route.ts),
 * elsewhere this message.
 */
export class ServiceBusy extends ApiError {
  override name = "ServiceBusy";
  constructor(message = "too busy right now, try again in a moment") {
    super(503, message, { "Retry-After": "1" });
  }
}
