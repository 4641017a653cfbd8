import { OAuthError } from "@/oauth/errors";

/** A request parameter as a string; absent or empty -> undefined; any other type -> invalid_request. */
export function stringParam(params: Record<string, unknown>, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new OAuthError("invalid_request", {}, `${name} must be a string`);
  return value;
}

export function requiredParam(params: Record<string, unknown>, name: string): string {
  const value = stringParam(params, name);
  if (value === undefined) throw new OAuthError("invalid_request", {}, `${name} is required`);
  return value;
}
