// Renders the permission-request e-mail (emails/permission-request.tsx) to its subject, HTML and plain text.
// Rendering happens before the database transaction that writes the request and its outbox row, so that the
// transaction holds nothing but database calls (STACK.md). Names people chose pass through noLinks() so that
// mail clients do not link them (CONTRACT.md 14), and a second copy without the link is rendered for the
// outbox to keep once the provider accepted the mail (src/email/deliver.ts).
import { createElement, type ReactElement } from "react";
import { render } from "@react-email/render";
import PermissionRequestEmail, { permissionRequestSummary, type PermissionRequestEmailProps } from "@emails/permission-request";
import { noLinks } from "@/email/no-links";
import type { OutgoingMail } from "@/email/outbox";

/** "2026-11-29 14:05 UTC": unambiguous wherever the reader is. */
export function formatExpiry(date: Date): string {
  return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** A subject is one line whatever the names hold. */
export const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();

/** One e-mail component as HTML and as plain text. */
export async function renderHtmlAndText(element: ReactElement): Promise<{ html: string; text: string }> {
  const [html, text] = await Promise.all([render(element), render(element, { plainText: true })]);
  return { html, text };
}

export async function renderPermissionRequestMail(to: string, props: PermissionRequestEmailProps): Promise<OutgoingMail> {
  const safe: PermissionRequestEmailProps = {
    ...props,
    targetName: noLinks(props.targetName),
    requesterName: noLinks(props.requesterName),
    allowedName: noLinks(props.allowedName),
    bundleName: noLinks(props.bundleName),
  };
  const [live, kept] = await Promise.all([
    renderHtmlAndText(createElement(PermissionRequestEmail, safe)),
    renderHtmlAndText(createElement(PermissionRequestEmail, { ...safe, link: null })),
  ]);
  return {
    to,
    kind: "permission_request",
    subject: oneLine(permissionRequestSummary(safe)),
    html: live.html,
    text: live.text,
    redactedHtml: kept.html,
    redactedText: kept.text,
  };
}
