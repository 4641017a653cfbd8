// Input of POST /api/bundle_permission_request/ (docs/rules/permission-requests.md#creating-a-request).
import { z } from "zod";
import { ZBundleReference } from "@/bundles/bundle-reference";
import { env } from "@/env";
import { ZUserReference } from "@/users/user-reference";

export const DEFAULT_TTL = 7 * 24 * 3600;
export const MIN_TTL = 60;
export const MAX_TTL = 30 * 24 * 3600;
export const REDEEM_PATH = "/redeem";
const MAX_REDEEM_URL = 2048;

const isBlank = (value: unknown) => value === undefined || value === null || (typeof value === "string" && value.trim() === "");

/** Seconds the e-mailed token stays valid: null or blank is 7 days; a whole number from 60 to 2592000. */
export const ZTtl = z.unknown().optional().transform((value, ctx): number => {
  if (isBlank(value)) return DEFAULT_TTL;
  const number = typeof value === "number" ? value : typeof value === "string" && /^\s*\d{1,8}\s*$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(number) || number < MIN_TTL || number > MAX_TTL) {
    ctx.addIssue({ code: "custom", message: `must be an integer from ${MIN_TTL} to ${MAX_TTL}` });
    return z.NEVER;
  }
  return number;
});

/**
 * The page the e-mail link opens, as an absolute URL: it must resolve against APP_URL to APP_URL's origin and
 * the path /redeem (its own query is kept; no fragment, no credentials). Null or blank is APP_URL/redeem. This
 * keeps the loop on the service's own servers (docs/rules/permission-requests.md#redeem-url) and stops a mail
 * from pointing anywhere else.
 */
export const ZRedeemUrl = z.unknown().optional().transform((value, ctx): string => {
  const base = env().appUrl;
  if (isBlank(value)) return new URL(REDEEM_PATH, base).href;
  const refuse = () => {
    ctx.addIssue({ code: "custom", message: `must be the ${REDEEM_PATH} page of ${base}, e.g. ${REDEEM_PATH}` });
    return z.NEVER;
  };
  if (typeof value !== "string" || value.length > MAX_REDEEM_URL) return refuse();
  let url: URL;
  try {
    url = new URL(value.trim(), base);
  } catch {
    return refuse();
  }
  if (url.origin !== new URL(base).origin || url.pathname !== REDEEM_PATH || url.hash || url.username || url.password) return refuse();
  // The link gets its own `token`; one already there would be ambiguous.
  if (url.searchParams.has("token")) url.searchParams.delete("token");
  return url.href;
});

export const ZCreatePermissionRequest = z.object({
  bundle: ZBundleReference,
  user_allowed: ZUserReference,
  user_target: ZUserReference,
  redeem_url: ZRedeemUrl,
  ttl: ZTtl,
});
export type TCreatePermissionRequest = z.input<typeof ZCreatePermissionRequest>;
