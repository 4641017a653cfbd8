// The JWKS (RFC 7517 5) with the id_token signing keys; cached for five minutes, so that a rotated key is
// fetched soon (libraries also refetch on an unknown kid).
import { json } from "@/http/respond";
import { route } from "@/http/route";
import { publishedKeys } from "@/oidc/keys";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  { GET: async () => json(await publishedKeys(), 200, { "Cache-Control": "public, max-age=300" }) },
  { kind: "oauth", cors: true },
);
