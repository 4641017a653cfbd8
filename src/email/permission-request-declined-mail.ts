// Renders the mail that tells a requester their permission request was declined
// (emails/permission-request-declined.tsx, docs/rules/permission-requests.md#declining-mails-the-requester), before
// the transaction that declines the request and writes it to the outbox. Names people chose pass through
// noLinks() (docs/rules/permission-requests.md#mail-and-the-outbox).
import { createElement } from "react";
import type { PermissionRequestDeclinedProps } from "@emails/permission-request-declined";
import { noLinks } from "@/email/no-links";
import type { OutgoingMail } from "@/email/outbox";
import { oneLine, renderHtmlAndText } from "@/email/render";

export async function renderPermissionRequestDeclinedMail(to: string, props: PermissionRequestDeclinedProps): Promise<OutgoingMail> {
  // Loaded with the first mail, not with the server (docs/design.md#memory).
  const { default: PermissionRequestDeclined, permissionRequestDeclinedSubject } = await import("@emails/permission-request-declined");
  const safe: PermissionRequestDeclinedProps = {
    ...props,
    requesterName: noLinks(props.requesterName),
    owner: noLinks(props.owner),
    allowed: props.allowed === null ? null : noLinks(props.allowed),
    bundleName: noLinks(props.bundleName),
  };
  const { html, text } = await renderHtmlAndText(createElement(PermissionRequestDeclined, safe));
  return { to, kind: "permission_request_declined", subject: oneLine(permissionRequestDeclinedSubject(safe)), html, text };
}
