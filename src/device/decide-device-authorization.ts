// The person's decision on a device authorization (RFC 8628 3.3, docs/rules/tokens.md#device-flow), posted
// from the consent page (docs/rules/tokens.md#consent) like any other. One conditional write decides it
// (pending and unexpired only), so that two decisions, or a decision and an expiry, never both count; approval
// records `consent.granted` in the same transaction. The device learns the outcome from its next poll. Device
// flows are asked every time (the person must compare the code on the device with the one on the page: RFC
// 8628 5.4), so the consent is not remembered for the code flow.
import type { Client } from "@/generated/sqlite/client";
import { now } from "@/clock";
import { recordEventInTx } from "@/audit/record-event";
import { htmlErrorPage, redirect } from "@/http/html";
import { write } from "@/db/client";
import type { AuthorizationRequest } from "@/oauth/authorization-request";
import { formatScope } from "@/oauth/scope";

export async function decideDeviceAuthorization(options: { authorization: AuthorizationRequest; client: Client; approve: boolean; ip: string }): Promise<Response> {
  const { authorization, client, approve, ip } = options;
  const id = authorization.deviceAuthorizationId;
  if (id === undefined) {
    return htmlErrorPage(400, "Request expired", "This request is not valid. Type the code from your device again.", [
      ["Error", "invalid_request"],
      ["client_id", client.clientId],
    ]);
  }
  const decided = await write(async (tx) => {
    const at = now();
    const { count } = await tx.deviceAuthorization.updateMany({
      where: { id, clientId: client.id, status: "pending", expiresAt: { gt: at } },
      data: {
        status: approve ? "approved" : "denied",
        userId: authorization.userId,
        authTime: authorization.authTime ? new Date(authorization.authTime * 1000) : null,
        decidedAt: at,
      },
    });
    if (count !== 1) return false;
    if (approve) {
      await recordEventInTx(tx, {
        type: "consent.granted",
        userId: authorization.userId,
        clientId: client.clientId,
        ip,
        detail: { flow: "device_code", scope: formatScope(authorization.scopes) },
      });
    }
    return true;
  });
  if (!decided) return redirect("/device?error=expired", 303);
  return redirect(`/device?done=${approve ? "approved" : "denied"}`, 303);
}
