/** A post-sign-in destination: a path on this site only (never //host or an absolute URL: no open redirect). */
export function safeCallbackUrl(value: unknown): string {
  if (typeof value !== "string" || !value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return "/";
  return value;
}
