// Every client, for administrators (the CLI's client:list and client:delete,
// docs/rules/tokens.md#dynamic-registration): a client that registered itself (RFC 7591) has no owner who
// could see or delete it on /settings/clients, so the CLI is where it is seen and removed. Deleting takes
// every grant, token, code and consent with it (the foreign keys cascade), and is recorded as client.deleted
// in the same transaction.
import { recordEventInTx } from "@/audit/record-event";
import { notFound } from "@/http/errors";
import { db, write } from "@/db/client";
import { representClient } from "@/clients/represent";

export async function listAllClients() {
  const clients = await (await db()).client.findMany({ include: { owner: true }, orderBy: { id: "asc" } });
  // The administrator sees owners' e-mails (as the CLI's own user commands do).
  return clients.map((client) => ({
    ...representClient(client, client.ownerId),
    registration: client.registeredVia ?? "person",
  }));
}

export async function deleteAnyClient(clientId: string) {
  const client = await (await db()).client.findUnique({ where: { clientId }, include: { owner: true } });
  if (!client) throw notFound("client-id: no such client");
  await write(async (tx) => {
    const { count } = await tx.client.deleteMany({ where: { id: client.id } });
    if (count === 1) await recordEventInTx(tx, { type: "client.deleted", clientId: client.clientId, userId: client.ownerId, detail: { via: "cli" } });
  });
  return { client_id: client.clientId, name: client.name, deleted: true };
}
