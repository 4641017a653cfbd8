// Parameters of the OAuth endpoints (RFC 6749 3.1: strings, each at most once, which readBody() checks).
// The input rule (src/http/input-text.ts): a parameter holding a control character is invalid_request, also
// where the parameters come from elsewhere than a body read by readBody().
import { controlCharacterMessage, hasControlCharacter } from "@/http/input-text";
import { OAuthError } from "@/oauth/errors";

/** A request parameter as a string; absent or empty -> undefined; any other type -> invalid_request. */
export function stringParam(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new OAuthError("invalid_request", {}, `${name} must be a string`);
  if (hasControlCharacter(value)) throw new OAuthError("invalid_request", {}, controlCharacterMessage(name));
  return value;
}

export function requiredParam(params: Record<string, unknown>, name: string): string {
  const value = stringParam(params, name);
  if (value === undefined) throw new OAuthError("invalid_request", {}, `${name} is required`);
  return value;
}
