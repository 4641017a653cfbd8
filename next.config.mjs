/** @type {import('next').NextConfig} */
const securityHeaders = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  // same-origin, not no-referrer: with no-referrer, browsers send `Origin: null` on form posts, which the
  // consent form's Origin check must refuse. Redirects that carry codes or tokens set no-referrer themselves.
  { key: "Referrer-Policy", value: "same-origin" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
];

const nextConfig = {
  // /api/x and /api/x/ answer directly, never with a 308 (docs/rules/endpoints.md#paths).
  skipTrailingSlashRedirect: true,
  poweredByHeader: false,
  // Types are checked once, over the whole repository (tests and scripts included), by `npm run typecheck`,
  // which CI runs before the build; the build does not check them a second time.
  typescript: { ignoreBuildErrors: true },
  reactStrictMode: true,
  // Next loads every page and route module of the build at start by default; under `npm start` the fast lane
  // serves /api itself, and a page's module is loaded when it is first asked for (docs/design.md#memory).
  experimental: { preloadEntriesOnStart: false },
  // The dev server's request log must not print tokens (docs/rules/endpoints.md#records-and-identifiers);
  // `next start` logs no requests. Paths and queries that carry tokens, codes or secrets: token paths, the
  // authorization endpoint (an implicit client_secret), the redeem, e-mail confirmation and password reset
  // pages (?token=) and the device page (?user_code=).
  logging: {
    incomingRequests: {
      ignore: [/\/api\/(accesstoken|oauth2token|bundle_permission_request)\/[^/?]*[^/?\d]/, /^\/api\/connect\/oauth2\/auth/, /^\/redeem/, /^\/verify-email/, /^\/reset-password/, /^\/device/],
    },
  },
  // Native modules and the generated Prisma clients stay plain Node requires on the server.
  serverExternalPackages: ["better-sqlite3", "prom-client", "@node-rs/argon2", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "pg"],
  async headers() {
    return [{ source: "/:path*", headers: securityHeaders }];
  },
};

export default nextConfig;
