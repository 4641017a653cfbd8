// The e-mail that tells a permission request's requester that the bundle's owner declined it
// (docs/rules/permission-requests.md#declining-mails-the-requester). It names the owner, the allowed user and
// the bundle as the pages do (docs/rules/permission-requests.md#who-sees-an-e-mail-address: the requester sees
// names and user ids, no other person's address), and links to the requester's Sharing page. Rendered by
// src/email/permission-request-declined-mail.ts, which passes the names through noLinks(); it carries no
// single-use link, so the outbox keeps it as it is. PreviewProps for `email dev`.
import { Link, Text } from "@react-email/components";
import { MailLayout, small } from "./layout";

export type PermissionRequestDeclinedProps = {
  requesterName: string;
  /** "Olive Owner (user 4)" */
  owner: string;
  /** null when the requester asked for themself; else "Fay Friend (user 5)". */
  allowed: string | null;
  bundleName: string;
  /** When the request was made and declined, already formatted (src/format/date-time.ts). */
  askedAt: string;
  declinedAt: string;
  /** The requester's Sharing page, where the request shows as declined. */
  sharingUrl: string;
};

export function permissionRequestDeclinedSubject(props: Pick<PermissionRequestDeclinedProps, "bundleName">): string {
  return `Your request for “${props.bundleName}” was declined`;
}

export default function PermissionRequestDeclined(props: PermissionRequestDeclinedProps) {
  return (
    <MailLayout
      preview={permissionRequestDeclinedSubject(props)}
      heading={permissionRequestDeclinedSubject(props)}
      footer={<>You get this e-mail because you asked for access to “{props.bundleName}” on {props.askedAt}.</>}
    >
      <Text>Hello {props.requesterName},</Text>
      <Text>
        {props.owner} declined your request to let {props.allowed ?? "you"} read the bundle “{props.bundleName}”, on {props.declinedAt}.
        Nobody was given access.
      </Text>
      <Text style={small}>
        Your requests and what became of them are on your Sharing page: <Link href={props.sharingUrl}>{props.sharingUrl}</Link>
      </Text>
    </MailLayout>
  );
}

PermissionRequestDeclined.PreviewProps = {
  requesterName: "Bob Demo",
  owner: "Alice Demo (user 1)",
  allowed: null,
  bundleName: "Alice’s photos",
  askedAt: "27 Nov 2026, 14:05 UTC",
  declinedAt: "28 Nov 2026, 09:12 UTC",
  sharingUrl: "http://localhost:3000/settings/sharing#requests-you-sent",
} satisfies PermissionRequestDeclinedProps;
