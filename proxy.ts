// Next.js 16's proxy (formerly middleware) for every page request: the security headers of
// docs/rules/operations.md#security-headers with a fresh CSP nonce (src/http/security-headers.ts). The nonce
// travels to Next in the request's own Content-Security-Policy header, from which Next takes it for its
// scripts; pages are rendered per request (app/layout.tsx), since a nonce baked into a prerendered page would
// be the same for everyone. /api and /.well-known are answered by route handlers (the fast lane under `npm
// start`), which add their own headers. Under `npm start`, Strict-Transport-Security (https) is also set on
// everything Next answers, before Next sees the request (src/server/front.ts): next-auth's /api/auth/ and the
// files this matcher leaves out.
import { NextResponse, type NextRequest } from "next/server";
import { env } from "@/env";
import { contentSecurityPolicy, isHttpsUrl, newNonce, pageSecurityHeaders } from "@/http/security-headers";
import { sealedRedirectUri } from "@/oauth/authorization-request";
import { sealedLogoutRedirectUri } from "@/logout/logout-request";

export function proxy(request: NextRequest) {
  const config = env();
  const https = isHttpsUrl(config.appUrl);
  const nonce = newNonce();
  // The consent form answers with a 303 to the client's redirect URI: that origin may follow the post.
  const sealed = request.nextUrl.pathname === "/consent" ? request.nextUrl.searchParams.get("request") : null;
  // So does the logout confirmation form, to the application's registered post-logout address
  // (docs/rules/openid-connect.md#logout).
  const sealedLogout = request.nextUrl.pathname === "/logout" ? request.nextUrl.searchParams.get("request") : null;
  const redirectUri = sealed ? sealedRedirectUri(sealed) : sealedLogout ? sealedLogoutRedirectUri(sealedLogout) : null;
  const policy = contentSecurityPolicy({
    nonce,
    formTargets: redirectUri ? [redirectUri] : [],
    https,
    development: config.nodeEnv === "development",
    httpsImages: request.nextUrl.pathname === "/consent",
  });

  const headers = new Headers(request.headers);
  headers.set("x-nonce", nonce);
  headers.set("Content-Security-Policy", policy);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("Content-Security-Policy", policy);
  for (const [name, value] of pageSecurityHeaders(https)) response.headers.set(name, value);
  return response;
}

export const config = {
  matcher: [{ source: "/((?!api/|api$|\\.well-known/|_next/static|_next/image|favicon\\.ico).*)" }],
};
