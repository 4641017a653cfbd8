// The consent decision, POST /consent/decide (docs/rules/tokens.md#consent): a plain HTML form post from the
// consent page, protected by an Origin check and a CSRF token bound to the user and the sealed request;
// answered with 303. A sealed device-flow request (RFC 8628 3.3) goes to
// src/device/decide-device-authorization.ts. An account whose address is not confirmed approves nothing
// (account pre-hijacking, docs/rules/accounts.md#unconfirmed-accounts): its Approve is answered as a refusal,
// access_denied (RFC 6749 4.1.2.1, 4.2.2.1) for the code and implicit flows, and for the device flow a page
// that says why (the device authorization stays pending).
import { now } from "@/clock";
import { env } from "@/env";
import { sessionUserFromRequest } from "@/auth/session";
import { readBody } from "@/http/body";
import { clientAddress } from "@/http/client-address";
import { htmlErrorPage, redirect } from "@/http/html";
import { isPublicClient } from "@/clients/represent";
import { db, write } from "@/db/client";
import { log } from "@/observability/log";
import { decideDeviceAuthorization } from "@/device/decide-device-authorization";
import { csrfTokenMatches, openRequest } from "@/oauth/authorization-request";
import { completeAuthorization, errorRedirect } from "@/oauth/authorize";
import { formatScope, storedScopes } from "@/oauth/scope";
import { recordEvent, recordEventInTx } from "@/audit/record-event";
import { emailConfirmed } from "@/accounts/confirmed";

/** Remembers that the user approved these scopes for this client (added to what was approved before). */
async function rememberConsent(userId: number, clientId: number, publicClientId: string, scopes: string[], ip: string): Promise<void> {
  const at = now();
  await write(async (tx) => {
    const existing = await tx.consent.findUnique({ where: { userId_clientId: { userId, clientId } } });
    const union = formatScope(storedScopes([...(existing ? existing.scopes.split(" ") : []), ...scopes].join(" ")));
    await tx.consent.upsert({
      where: { userId_clientId: { userId, clientId } },
      create: { userId, clientId, scopes: union, createdAt: at, updatedAt: at },
      update: { scopes: union, updatedAt: at },
    });
    await recordEventInTx(tx, { type: "consent.granted", userId, clientId: publicClientId, ip, detail: { scope: formatScope(storedScopes(scopes.join(" "))), remembered: true } });
  });
}

export async function handleConsentDecision(request: Request): Promise<Response> {
  if (request.headers.get("origin") !== new URL(env().appUrl).origin) {
    return htmlErrorPage(403, "Request refused", "This form can only be sent from this site's own consent page.", [["Error", "invalid_request"]]);
  }
  const user = await sessionUserFromRequest(request);
  if (!user) return redirect("/login", 303);
  const form = await readBody(request, { form: true, invalidMessage: "invalid_request" }).catch(() => ({}) as Record<string, unknown>);
  const sealed = typeof form.request === "string" ? form.request : "";
  const csrf = typeof form.csrf === "string" ? form.csrf : "";
  // A missing field reads as "", which no token ever matches (the page never offers a form without a request).
  if (!csrfTokenMatches(user.id, sealed, csrf)) {
    return htmlErrorPage(403, "Request refused", "The consent form was not valid for your session. Go back to the application and start again.", [["Error", "invalid_request"]]);
  }
  const authorization = openRequest(sealed, user.id);
  if (!authorization) {
    return htmlErrorPage(400, "Request expired", "This authorization request has expired. Go back to the application and start again.", [["Error", "invalid_request"]]);
  }
  const client = await (await db()).client.findUnique({ where: { clientId: authorization.clientId } });
  if (!client) {
    return htmlErrorPage(400, "Unknown application", "This application is no longer registered.", [
      ["Error", "invalid_client"],
      ["client_id", authorization.clientId],
    ]);
  }
  const approve = form.decision === "approve";
  const unconfirmed = approve && !(await emailConfirmed(user.id));
  if (unconfirmed) log.info("approval refused: address not confirmed", { client: client.clientId, user: user.id });
  if (authorization.responseType === "device_code") {
    if (unconfirmed) {
      return htmlErrorPage(403, "Confirm your e-mail address first", "You can let apps use your account once you have confirmed your e-mail address. Open the link we mailed you (or ask for a new one on the home page), then type the code from your device again.", [
        ["Error", "access_denied"],
        ["client_id", client.clientId],
      ]);
    }
    return decideDeviceAuthorization({ authorization, client, approve, ip: clientAddress(request) });
  }
  const target = { redirectUri: authorization.redirectUri, mode: authorization.responseType === "token" ? "fragment" : "query", state: authorization.state } as const;
  if (!approve || unconfirmed) return errorRedirect(target, "access_denied", 303);
  const ip = clientAddress(request);
  if (!isPublicClient(client) && !client.firstParty) await rememberConsent(user.id, client.id, client.clientId, authorization.scopes, ip);
  else await recordEvent({ type: "consent.granted", userId: user.id, clientId: client.clientId, ip, detail: { scope: formatScope(authorization.scopes), remembered: false } });
  return completeAuthorization(authorization, client, 303);
}
