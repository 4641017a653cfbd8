// Renders the permission-request e-mail (emails/permission-request.tsx) to its subject, HTML and plain text.
// Rendering happens before the database transaction that writes the request and its outbox row, so that the
// transaction holds nothing but database calls (STACK.md).
import { createElement } from "react";
import { render } from "@react-email/render";
import PermissionRequestEmail, { permissionRequestSummary, type PermissionRequestEmailProps } from "@emails/permission-request";
import type { OutgoingMail } from "@/email/outbox";

/** "2026-11-29 14:05 UTC": unambiguous wherever the reader is. */
export function formatExpiry(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** A subject is one line whatever the names hold. */
const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

export async function renderPermissionRequestMail(to: string, props: PermissionRequestEmailProps): Promise<OutgoingMail> {
  const element = createElement(PermissionRequestEmail, props);
  const [html, text] = await Promise.all([render(element), render(element, { plainText: true })]);
  return { to, subject: oneLine(permissionRequestSummary(props)), html, text };
}
