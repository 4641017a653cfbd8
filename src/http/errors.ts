// Errors a request can end in. Every one becomes {"error": "<string>"} with its status (CONTRACT.md 1);
// anything else thrown is a server_error whose details go only to the log.

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

export const badRequest = (message: string) => new ApiError(400, message);
export const notFound = (message = "not found") => new ApiError(404, message);
export const forbidden = (message = "forbidden", headers: Record<string, string> = {}) =>
  new ApiError(403, message, headers);
export const conflict = (message: string) => new ApiError(409, message);
export const gone = (message: string) => new ApiError(410, message);
export const tooManyRequests = (retryAfterSeconds: number, message = "rate_limited") =>
  new ApiError(429, message, { "Retry-After": String(Math.max(1, Math.ceil(retryAfterSeconds))) });
export const methodNotAllowed = (allow: string[], message = "method not allowed") =>
  new ApiError(405, message, { Allow: allow.join(", ") });
