// Renders the permission-request e-mail (emails/permission-request.tsx) to its subject, HTML and plain text.
// Rendering happens before the database transaction that writes the request and its outbox row, so that the
// transaction holds nothing but database calls (src/db/client.ts). Names people chose pass through noLinks()
// so that mail clients do not link them (docs/rules/permission-requests.md#who-sees-an-e-mail-address), and a
// second copy without the link is rendered for the outbox to keep once the provider accepted the mail
// (src/email/deliver.ts).
import { createElement } from "react";
import type { PermissionRequestEmailProps } from "@emails/permission-request";
import { noLinks } from "@/email/no-links";
import type { OutgoingMail } from "@/email/outbox";
import { oneLine, renderHtmlAndText } from "@/email/render";


export async function renderPermissionRequestMail(to: string, props: PermissionRequestEmailProps): Promise<OutgoingMail> {
  // Loaded with the first mail, not with the server (docs/design.md#memory).
  const { default: PermissionRequestEmail, permissionRequestSummary } = await import("@emails/permission-request");
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
