import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { listMailbox, mailboxEnabled } from "@/email/mailbox";
import { Card, Page } from "../../components/ui";
import { requireUser } from "../../settings/require-user";

export const metadata: Metadata = { title: "Development mailbox" };

export default async function MailboxPage() {
  if (!mailboxEnabled()) notFound();
  await requireUser("/dev/mailbox");
  const messages = await listMailbox();
  return (
    <Page title="Development mailbox">
      <p className="text-sm text-slate-600 dark:text-slate-400">
        Every message in the outbox, newest first. This page exists only in development (or with DEV_MAILBOX=1): it shows live links.
      </p>
      {messages.length === 0 ? <Card>No mail yet.</Card> : null}
      <ul className="space-y-2">
        {messages.map((message) => (
          <li key={message.id}>
            <Link href={`/dev/mailbox/${message.id}`} className="block rounded-lg border border-slate-200 bg-white p-3 hover:bg-slate-50 dark:border-slate-800 dark:bg-slate-900 dark:hover:bg-slate-800">
              <span className="block font-medium">{message.subject}</span>
              <span className="block text-sm text-slate-600 dark:text-slate-400">
                to {message.to} · {message.status} · {message.createdAt.toISOString().slice(0, 19).replace("T", " ")} UTC
              </span>
            </Link>
          </li>
        ))}
      </ul>
    </Page>
  );
}
