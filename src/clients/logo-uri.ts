// A client's logo address (RFC 7591 2 logo_uri; docs/rules/tokens.md#clients): an absolute https URL, the same
// rule for a client that registered itself (src/registration/client-metadata.ts) and one its owner edits on
// /settings/clients (src/clients/update-client.ts).
export const MAX_LOGO_URI_LENGTH = 2000;

/** Why `uri` cannot be a logo address, or null. */
export function logoUriProblem(uri: string): string | null {
  if (uri.length > MAX_LOGO_URI_LENGTH) return `at most ${MAX_LOGO_URI_LENGTH} characters`;
  if (!URL.canParse(uri)) return "not an absolute URL";
  if (new URL(uri).protocol !== "https:") return "must use https";
  return null;
}
