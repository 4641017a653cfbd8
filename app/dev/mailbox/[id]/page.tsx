import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { getMailboxMessage, mailboxEnabled } from "@/email/mailbox";
import { pageDateFormatter } from "../../../components/reader";
import { Card, Page, TextLink } from "../../../components/ui";
import { requireUser } from "../../../settings/require-user";
import { MailFrame } from "../mail-frame";

export const metadata: Metadata = { title: "Message", robots: { index: false } };

export default async function MailboxMessagePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!mailboxEnabled() || !/^\d{1,12}$/.test(id)) notFound();
  await requireUser(`/dev/mailbox/${id}`);
  const [message, format] = await Promise.all([getMailboxMessage(Number(id)), pageDateFormatter()]);
  if (!message) notFound();
  return (
    <Page title={message.subject}>
      <p className="text-sm">
        <TextLink href="/dev/mailbox">All messages</TextLink>
      </p>
      <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm">
        <dt className="font-medium">To</dt>
        <dd className="break-words">{message.to}</dd>
        <dt className="font-medium">Written</dt>
        <dd>{format(message.createdAt)}</dd>
        <dt className="font-medium">Status</dt>
        <dd>{message.status}</dd>
      </dl>
      <Card className="space-y-2 p-3 sm:p-5">
        <h2 className="text-sm font-semibold">HTML</h2>
        <MailFrame html={message.html} title="HTML version" />
      </Card>
      <Card className="space-y-2">
        <h2 className="text-sm font-semibold">Text</h2>
        {/* Whole words stay whole; only a word longer than the line (a link) is broken. */}
        <pre className="font-sans text-sm whitespace-pre-wrap break-words">{message.text}</pre>
      </Card>
    </Page>
  );
}
