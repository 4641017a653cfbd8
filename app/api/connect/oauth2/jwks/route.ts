// The JWKS (RFC 7517 5) with the id_token signing keys, read from the database on every request and never
// cached (no-store), so that a revoked key leaves it at once for every reader
// (docs/rules/openid-connect.md#signing-keys); libraries keep their own copy and refetch on an unknown kid.
import { json } from "@/http/respond";
import { route } from "@/http/route";
import { publishedKeys } from "@/oidc/keys";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  { GET: async () => json(await publishedKeys(), 200, { "Cache-Control": "no-store" }) },
  { kind: "oauth", cors: true },
);
