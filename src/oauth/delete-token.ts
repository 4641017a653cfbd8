// DELETE /api/accesstoken/<token> and DELETE /api/oauth2token/<token>/
// (docs/rules/tokens.md#deleting-a-token): knowing the access token is the authority. It disconnects the user
// from the client: every access and refresh token of the token's grant is revoked. 204 for a known token
// (expired or not), 404 for an unknown or already revoked one.
import { notFound } from "@/http/errors";
import { digest } from "@/secrets";
import { db, write } from "@/db/client";
import { revokeGrantInTx } from "@/oauth/tokens";

export async function deleteAccessToken(token: string): Promise<void> {
  const row = await (await db()).accessToken.findUnique({ where: { digest: digest(token) }, select: { grantId: true, revokedAt: true } });
  if (!row || row.revokedAt) throw notFound("no such token");
  const revoked = await write((tx) => revokeGrantInTx(tx, row.grantId, { type: "token.revoked", detail: { via: "token deleted" } }));
  if (revoked === 0) throw notFound("no such token");
}
