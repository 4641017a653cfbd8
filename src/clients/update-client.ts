// Editing one's own client on /settings/clients (docs/rules/tokens.md#editing-a-client): its name, redirect
// URIs, post-logout redirect URIs, back-channel logout URI and logo change in place. Everything else stays: the
// client_id, the secret (or keys), the grant type, public or confidential, and every consent, grant and token
// people gave it; removing a redirect URI only stops new authorization requests that name it. The addresses
// follow the rules of a new client (checkedAddresses() of src/clients/create-client.ts: RFC 6749 3.1.2,
// docs/rules/tokens.md#redirect-uris, docs/rules/openid-connect.md#logout), the logo the rule of registration
// (src/clients/logo-uri.ts), the name readableName() (src/http/input-text.ts). A refusal is a 400 that names
// the field and changes nothing; someone else's client, or one that is gone, is 404 (nothing about which
// clients exist). Recorded as client.updated (docs/rules/operations.md#audit-log) in the change's transaction.
import { z } from "zod";
import { recordEventInTx } from "@/audit/record-event";
import { badRequest, notFound } from "@/http/errors";
import { readableName } from "@/http/input-text";
import { parseInput } from "@/http/validate";
import { write } from "@/db/client";
import { checkedAddresses } from "@/clients/create-client";
import { logoUriProblem } from "@/clients/logo-uri";
import { representClient, type GrantType } from "@/clients/represent";

export const ZUpdateClient = z.object({
  ownerId: z.number().int().positive(),
  clientId: z.string().min(1).max(200),
  name: readableName(100),
  redirectUris: z.array(z.string().trim(), { error: "must be a list of URIs" }).max(20, "at most 20 redirect URIs").default([]),
  postLogoutRedirectUris: z.array(z.string().trim(), { error: "must be a list of URIs" }).default([]),
  backchannelLogoutUri: z.string().trim().nullable().default(null),
  logoUri: z.string().trim().nullable().default(null),
});
export type TUpdateClient = z.input<typeof ZUpdateClient>;

/** Changes the client's name and addresses in place; returns its representation (no secret). */
export async function updateOwnClient(input: TUpdateClient) {
  const data = parseInput(ZUpdateClient, input);
  const logoUri = data.logoUri || null;
  if (logoUri !== null) {
    const problem = logoUriProblem(logoUri);
    if (problem) throw badRequest(`logo_uri: ${problem}`);
  }
  const updated = await write(async (tx) => {
    const client = await tx.client.findFirst({ where: { clientId: data.clientId, ownerId: data.ownerId } });
    if (!client) return null;
    // Checked inside the transaction: the grant type the rules depend on is the stored one.
    const addresses = checkedAddresses(client.grantType as GrantType, data.redirectUris, data.postLogoutRedirectUris, data.backchannelLogoutUri);
    const changed = await tx.client.update({
      where: { id: client.id },
      data: {
        name: data.name,
        redirectUris: JSON.stringify(addresses.redirectUris),
        postLogoutRedirectUris: JSON.stringify(addresses.postLogoutRedirectUris),
        backchannelLogoutUri: addresses.backchannelLogoutUri,
        logoUri,
      },
      include: { owner: true },
    });
    await recordEventInTx(tx, { type: "client.updated", userId: data.ownerId, clientId: client.clientId });
    return changed;
  });
  if (!updated) throw notFound("no such client");
  return { ...representClient(updated, data.ownerId), logo_uri: updated.logoUri };
}
