// A user's own clients, for /settings/clients: list, rotate the secret (shown once), delete. Rotating and
// deleting are recorded in the audit log (client.secret_rotated, client.deleted;
// docs/rules/operations.md#audit-log) in the same transaction as the change.
import { recordEventInTx } from "@/audit/record-event";
import { badRequest, notFound } from "@/http/errors";
import { digest, randomSecret } from "@/secrets";
import { db, write } from "@/db/client";
import { representClient } from "@/clients/represent";

export async function listOwnClients(ownerId: number) {
  const clients = await (await db()).client.findMany({ where: { ownerId }, include: { owner: true }, orderBy: { id: "desc" } });
  return clients.map((client) => ({ ...representClient(client, ownerId), logo_uri: client.logoUri }));
}

/** A new secret for a confidential client; the old one stops working at once. */
export async function rotateClientSecret(options: { ownerId: number; clientId: string }): Promise<string> {
  const secret = randomSecret();
  const count = await write(async (tx) => {
    const client = await tx.client.findFirst({ where: { clientId: options.clientId, ownerId: options.ownerId } });
    if (!client) return -1;
    if (!client.secretDigest) return 0;
    const updated = (await tx.client.updateMany({ where: { id: client.id }, data: { secretDigest: digest(secret) } })).count;
    if (updated === 1) await recordEventInTx(tx, { type: "client.secret_rotated", userId: options.ownerId, clientId: client.clientId });
    return updated;
  });
  if (count === -1) throw notFound("no such client");
  if (count === 0) throw badRequest("client: a public client has no secret");
  return secret;
}

/** Deletes a client and, with it, every grant, token, code and consent it had. */
export async function deleteOwnClient(options: { ownerId: number; clientId: string }): Promise<void> {
  const { count } = await write(async (tx) => {
    const deleted = await tx.client.deleteMany({ where: { clientId: options.clientId, ownerId: options.ownerId } });
    if (deleted.count === 1) await recordEventInTx(tx, { type: "client.deleted", userId: options.ownerId, clientId: options.clientId });
    return deleted;
  });
  if (count === 0) throw notFound("no such client");
}
