// The e-mail that asks a bundle's owner (user_target) to allow a user into it
// (docs/rules/specification.md#what-the-service-does, docs/rules/permission-requests.md#mail-and-the-outbox).
// It names the requester, the allowed user and the bundle, and carries the single-use link and its expiry.
// People appear as on the pages (docs/rules/permission-requests.md#who-sees-an-e-mail-address): "Name
// (e-mail)" where the target may see the address, else "Name (user 7)". Rendered to HTML and plain text by
// src/email/permission-request-mail.ts, which passes the names through noLinks() and renders a second copy
// without the link to keep once the mail was sent; PreviewProps for `email dev`.
import { Text } from "@react-email/components";
import { ActionLink, MailLayout, small } from "./layout";

export type PermissionRequestEmailProps = {
  targetName: string;
  requesterId: number;
  requesterName: string;
  /**
   * Shown to the target so that they know who really asks (names are chosen freely;
   * docs/rules/permission-requests.md#who-sees-an-e-mail-address).
   */
  requesterEmail: string | null;
  allowedId: number;
  allowedName: string;
  /**
   * Only when the requester named the allowed user by e-mail
   * (docs/rules/permission-requests.md#who-sees-an-e-mail-address).
   */
  allowedEmail: string | null;
  /** The requester asks for access for themself. */
  requesterIsAllowed: boolean;
  bundleName: string;
  /** The redeem page with the single-use token in its `token` query argument; null in the stored copy. */
  link: string | null;
  /** When the link stops working, already formatted (src/format/date-time.ts). */
  expiresAt: string;
};

/** "Name (e-mail)", or "Name (user 7)" where the e-mail may not be shown: as personLabel() on the pages. */
const label = (name: string, email: string | null, id: number) => (email ? `${name} (${email})` : `${name} (user ${id})`);

/** The one sentence the subject and the preview share (names only: a subject is no place for addresses). */
export function permissionRequestSummary(props: Pick<PermissionRequestEmailProps, "requesterName" | "allowedName" | "requesterIsAllowed" | "bundleName">): string {
  return props.requesterIsAllowed
    ? `${props.requesterName} asks you for access to your bundle “${props.bundleName}”`
    : `${props.requesterName} asks you to let ${props.allowedName} read your bundle “${props.bundleName}”`;
}

export default function PermissionRequestEmail(props: PermissionRequestEmailProps) {
  const requester = label(props.requesterName, props.requesterEmail, props.requesterId);
  const allowed = label(props.allowedName, props.allowedEmail, props.allowedId);
  return (
    <MailLayout
      preview={permissionRequestSummary(props)}
      heading={`Access to your bundle “${props.bundleName}”`}
      footer={
        <>
          You get this e-mail because you own the bundle “{props.bundleName}”. The link works once, only for you, and expires
          on {props.expiresAt}. If you do not know {props.requesterName}, ignore this e-mail: nothing changes.
        </>
      }
    >
      <Text>Hello {props.targetName},</Text>
      <Text>
        {props.requesterIsAllowed
          ? `${requester} asks you for access to your bundle “${props.bundleName}”.`
          : `${requester} asks you to let ${allowed} read your bundle “${props.bundleName}”.`}
      </Text>
      <Text>
        If you accept, {props.requesterIsAllowed ? props.requesterName : props.allowedName} will be able to read the bundle until you
        revoke the access. Nobody gets access unless you accept.
      </Text>
      <ActionLink link={props.link} label="Review the request" />
      <Text style={small}>You can also decline it on the request’s page, or later on the Sharing page of your account.</Text>
    </MailLayout>
  );
}

PermissionRequestEmail.PreviewProps = {
  targetName: "Alice Demo",
  requesterId: 2,
  requesterName: "Bob Demo",
  requesterEmail: "bob@example.com",
  allowedId: 3,
  allowedName: "Carol Demo",
  allowedEmail: null,
  requesterIsAllowed: false,
  bundleName: "Alice’s photos",
  link: "http://localhost:3000/redeem?token=preview-token-not-valid",
  expiresAt: "29 Nov 2026, 14:05 UTC",
} satisfies PermissionRequestEmailProps;
