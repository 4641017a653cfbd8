// The development mailbox (/dev/mailbox): the outbox, readable in the browser when no mail provider is
// configured. It shows live redeem links, so it exists only when env().devMailbox is on (never by default
// in production).
import { env } from "@/env";
import { db } from "@/db/client";

export function mailboxEnabled(): boolean {
  return env().devMailbox;
}

export async function listMailbox(limit = 100) {
  return (await db()).mailMessage.findMany({
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
    take: limit,
    select: { id: true, to: true, subject: true, status: true, createdAt: true },
  });
}

export async function getMailboxMessage(id: number) {
  return (await db()).mailMessage.findUnique({ where: { id } });
}
