import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { listMailbox, mailboxEnabled } from "@/email/mailbox";
import { pageDateFormatter } from "../../components/reader";
import { Card, Page } from "../../components/ui";
import { requireUser } from "../../settings/require-user";

export const metadata: Metadata = { title: "Development mailbox", robots: { index: false } };

export default async function MailboxPage() {
  if (!mailboxEnabled()) notFound();
  await requireUser("/dev/mailbox");
  const [messages, format] = await Promise.all([listMailbox(), pageDateFormatter()]);
  return (
    <Page title="Development mailbox" lead={<p className="text-sm">Every message in the outbox, newest first. This page exists only in development (or with DEV_MAILBOX=1): it shows live links.</p>}>
      {messages.length === 0 ? <Card>No mail yet.</Card> : null}
      <ul className="space-y-2">
        {messages.map((message) => (
          <li key={message.id}>
            <Link
              href={`/dev/mailbox/${message.id}`}
              className="block rounded-lg border border-slate-200 bg-white p-3 hover:bg-slate-50 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-700 dark:border-slate-800 dark:bg-slate-900 dark:hover:bg-slate-800"
            >
              <span className="block font-medium break-words">{message.subject}</span>
              <span className="block text-sm break-words text-slate-600 dark:text-slate-400">
                to {message.to} · {message.status} · {format(message.createdAt)}
              </span>
            </Link>
          </li>
        ))}
      </ul>
    </Page>
  );
}
