/** @type {import('next').NextConfig} */
const securityHeaders = [
  { key: "X-Content-Type-Options", value: "nosniff" },
  { key: "Referrer-Policy", value: "no-referrer" },
  { key: "X-Frame-Options", value: "DENY" },
  { key: "Content-Security-Policy", value: "frame-ancestors 'none'" },
];

const nextConfig = {
  // CONTRACT.md 1: /api/x and /api/x/ answer directly, never with a 308.
  skipTrailingSlashRedirect: true,
  poweredByHeader: false,
  reactStrictMode: true,
  // The dev server's request log must not print tokens that travel in paths (CONTRACT.md 1).
  logging: { incomingRequests: { ignore: [/\/api\/(accesstoken|oauth2token|bundle_permission_request)\/[^/?]*[^/?\d]/] } },
  // Native modules and the generated Prisma clients stay plain Node requires on the server.
  serverExternalPackages: ["better-sqlite3", "@node-rs/argon2", "@prisma/adapter-better-sqlite3", "@prisma/adapter-pg", "pg"],
  async headers() {
    return [{ source: "/:path*", headers: securityHeaders }];
  },
};

export default nextConfig;
