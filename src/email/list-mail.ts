// The outbox as the admin CLI shows it (`mail:list`, docs/rules/operations.md#admin-cli): every message,
// newest first, optionally only those to one address. Without RESEND_API_KEY this is where mail can be read
// (and where the end-to-end tests read it), so the text and HTML bodies are included as stored: as written
// while unsent, and with any single-use link replaced by a note once the provider accepted the message
// (docs/rules/permission-requests.md#mail-and-the-outbox).
import { z } from "zod";
import { parseInput } from "@/http/validate";
import { db } from "@/db/client";

export const ZListMail = z.object({
  // Addresses are stored as the users' e-mails, which are always lower-case.
  to: z.string({ error: "must be a string" }).trim().toLowerCase().min(1, "must not be empty").optional(),
});
export type TListMail = z.input<typeof ZListMail>;

export type MailListItem = {
  to: string;
  subject: string;
  text: string;
  html: string;
  status: string;
  created_at: string;
};

export async function listMail(input: TListMail = {}): Promise<MailListItem[]> {
  const { to } = parseInput(ZListMail, input);
  const rows = await (await db()).mailMessage.findMany({
    where: to ? { to } : {},
    // Ids break ties between messages written in the same millisecond, so that newest first is stable.
    orderBy: [{ createdAt: "desc" }, { id: "desc" }],
  });
  return rows.map((row) => ({
    to: row.to,
    subject: row.subject,
    text: row.text,
    html: row.html,
    status: row.status,
    created_at: row.createdAt.toISOString(),
  }));
}
