// `/api/bundle_permission_request/<key>/` (docs/rules/permission-requests.md#ids-and-tokens-in-paths): a key
// made only of digits is a record id (its resource_uri: GET, DELETE); anything else is a token (check with
// GET, redeem with PUT). The two never overlap: tokens are 43 base64url characters, and the chance that one is
// all digits is about 10^-17.
import { methodNotAllowed } from "@/http/errors";

export type RequestKey = { kind: "id"; id: number } | { kind: "token"; token: string };

export function parseRequestKey(key: string): RequestKey {
  return /^\d+$/.test(key) ? { kind: "id", id: key.length > 12 ? 0 : Number(key) } : { kind: "token", token: key };
}

/** The methods each kind of key answers; anything else is a 405 with this Allow. */
export const ALLOWED_METHODS = {
  id: ["GET", "DELETE", "OPTIONS", "HEAD"],
  token: ["GET", "PUT", "OPTIONS", "HEAD"],
} as const;

export const wrongMethod = (key: RequestKey) =>
  methodNotAllowed([...ALLOWED_METHODS[key.kind]], key.kind === "id" ? "method not allowed: a permission request's resource_uri is not its redeem address" : "method not allowed: delete a request at its resource_uri");
