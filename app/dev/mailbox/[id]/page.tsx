import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { getMailboxMessage, mailboxEnabled } from "@/email/mailbox";
import { Card, Page, TextLink } from "../../../components/ui";
import { requireUser } from "../../../settings/require-user";

export const metadata: Metadata = { title: "Message" };

export default async function MailboxMessagePage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  if (!mailboxEnabled() || !/^\d{1,12}$/.test(id)) notFound();
  await requireUser(`/dev/mailbox/${id}`);
  const message = await getMailboxMessage(Number(id));
  if (!message) notFound();
  return (
    <Page title={message.subject}>
      <p className="text-sm">
        <TextLink href="/dev/mailbox">All messages</TextLink> · to {message.to} · {message.status}
      </p>
      <Card>
        <h2 className="mb-2 text-sm font-semibold">HTML</h2>
        {/* Rendered without scripts or same-origin rights. */}
        <iframe title="HTML version" sandbox="allow-popups allow-popups-to-escape-sandbox" srcDoc={message.html} className="h-[28rem] w-full rounded border border-slate-200 bg-white" />
      </Card>
      <Card>
        <h2 className="mb-2 text-sm font-semibold">Text</h2>
        <pre className="whitespace-pre-wrap break-all text-sm">{message.text}</pre>
      </Card>
    </Page>
  );
}
