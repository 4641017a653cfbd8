// What a sign-in is for (docs/rules/pages.md#sign-in: sign-in reached from an authorization request says which
// app it is for, "to continue to <app>"). The way back after sign-in (`callbackUrl`, already reduced to a path
// and query on this site by src/auth/callback-url.ts) tells: the authorization endpoint names its client; the
// device page names the code the person is about to type, whose app is known once the code is pending. Nothing
// here changes anything or says more than the consent page will show: an app's name, for a client_id or a live
// user code that the visitor already holds.
import { nowMs } from "@/clock";
import { db } from "@/db/client";
import { isMetadataDocumentClient } from "@/client-metadata-documents/document-client";
import { normalizeUserCode } from "@/device/user-code";

export type SignInPurpose = { kind: "app"; appName: string } | { kind: "device"; appName: string | null };

const AUTHORIZE_PATH = /^\/api\/connect\/oauth2\/auth\/?$/;

export async function signInPurpose(callbackUrl: string): Promise<SignInPurpose | null> {
  const url = new URL(callbackUrl, "http://callback.invalid");
  if (AUTHORIZE_PATH.test(url.pathname)) {
    const clientIds = url.searchParams.getAll("client_id");
    if (clientIds.length !== 1 || !clientIds[0] || clientIds[0].length > 200) return null;
    const client = await (await db()).client.findUnique({ where: { clientId: clientIds[0] }, select: { name: true, registeredVia: true } });
    if (!client) return null;
    // A client named by its metadata document is named by the document's host, as on the consent page
    // (docs/rules/tokens.md#client-id-metadata-documents).
    return { kind: "app", appName: isMetadataDocumentClient(client) ? new URL(clientIds[0]).host : client.name };
  }
  if (url.pathname === "/device") {
    const code = normalizeUserCode(url.searchParams.get("user_code") ?? "");
    if (!code) return { kind: "device", appName: null };
    const row = await (await db()).deviceAuthorization.findUnique({ where: { userCode: code }, select: { status: true, expiresAt: true, client: { select: { name: true } } } });
    const live = row && row.status === "pending" && row.expiresAt.getTime() > nowMs();
    return { kind: "device", appName: live ? row.client.name : null };
  }
  return null;
}
