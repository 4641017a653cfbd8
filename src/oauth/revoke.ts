// RFC 7009 token revocation, POST /api/connect/oauth2/revoke/. The client authenticates as at the token
// endpoint (a public client by client_id). `token_type_hint` says where to look first; an unknown hint is
// ignored (2.1: the server extends its search). Revoking a refresh token revokes its whole grant (every
// access and refresh token of it); revoking an access token ends that token. A token of another client is
// refused with unauthorized_client (2.1); an unknown, expired or already revoked token is answered 200
// like a revoked one (2.2), so the endpoint reveals nothing.
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { readBody } from "@/http/body";
import { NO_STORE } from "@/http/respond";
import { write } from "@/db/client";
import { authenticateClient } from "@/oauth/client-auth";
import { OAuthError } from "@/oauth/errors";
import { requiredParam, stringParam } from "@/oauth/params";
import { findTokenByValue, revokeGrantInTx } from "@/oauth/tokens";
import { recordEventInTx } from "@/audit/record-event";

export async function revokeToken(client: Client, token: string, hint: string | undefined): Promise<void> {
  const found = await findTokenByValue(token, hint);
  if (!found) return;
  if (found.clientId !== client.id) throw new OAuthError("unauthorized_client", {}, "token of another client");
  await write(async (tx) => {
    // RFC 7009 2.1: a refresh token ends its grant, an access token only itself.
    if (found.kind === "refresh_token") {
      await revokeGrantInTx(tx, found.grantId, { type: "token.revoked", detail: { via: "revocation endpoint", token_type: "refresh_token" } });
      return;
    }
    const { count } = await tx.accessToken.updateMany({ where: { id: found.id, revokedAt: null }, data: { revokedAt: now() } });
    if (count > 0) {
      await recordEventInTx(tx, { type: "token.revoked", userId: found.user.id, clientId: client.clientId, detail: { via: "revocation endpoint", token_type: "access_token" } });
    }
  });
}

export async function handleRevocationRequest(request: Request): Promise<Response> {
  const params = await readBody(request, { form: true, invalidMessage: "invalid_request" });
  const client = await authenticateClient(request, params);
  const token = requiredParam(params, "token");
  await revokeToken(client, token, stringParam(params, "token_type_hint"));
  return new Response(null, { status: 200, headers: NO_STORE });
}
