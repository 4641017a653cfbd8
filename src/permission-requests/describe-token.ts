// What the redeem page (/redeem?token=...) shows to the person holding a mailed link
// (docs/rules/permission-requests.md#checking-a-token, docs/rules/permission-requests.md#redeem-url): a read
// that changes nothing (mail scanners follow links). Like the API's check, it names the request only to its
// user_target (404 for an unknown token, "not for you" for anyone else); unlike the check, it also describes a
// request that ended (accepted, declined, withdrawn, expired), so that a reload after Accept shows the
// accepted request instead of an error. Accepting and declining go through the API (PUT on the token, DELETE
// on the record), which enforce the rules.
import { nowMs } from "@/clock";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { REQUEST_INCLUDE, representPermissionRequest, statusOf, type RequestStatus } from "@/permission-requests/represent";

export type TokenState = RequestStatus;

export type TokenView =
  | { state: "unknown" | "not_for_you" }
  | { state: TokenState; request: ReturnType<typeof representPermissionRequest>; endedAt: string | null };

export async function describePermissionToken(options: { token: string; viewerId: number }): Promise<TokenView> {
  if (!options.token || options.token.length > 200) return { state: "unknown" };
  const row = await (await db()).permissionRequest.findUnique({ where: { tokenDigest: digest(options.token) }, include: REQUEST_INCLUDE });
  if (!row) return { state: "unknown" };
  if (row.userTargetId !== options.viewerId) return { state: "not_for_you" };
  const atMs = nowMs();
  const state: TokenState = statusOf(row, atMs);
  return { state, request: representPermissionRequest(row, options.viewerId, atMs), endedAt: row.endedAt?.toISOString() ?? null };
}
