// The e-mail that confirms an address after sign-up (docs/rules/accounts.md#sign-up-and-confirmation): a
// single-use link to /verify-email, valid 24 hours. The page confirms only when the reader presses its button
// (a POST): mail scanners follow links, and a GET never changes anything. Rendered by
// src/accounts/account-mail.ts, which passes the name through noLinks() and renders a second copy without the
// link for the outbox to keep once it was sent.
import { Text } from "@react-email/components";
import { SERVICE_NAME } from "@/site";
import { ActionLink, MailLayout } from "./layout";

export type VerifyEmailProps = {
  name: string;
  email: string;
  /** /verify-email with the single-use token in its `token` query argument; null in the stored copy. */
  link: string | null;
  /** Already formatted (src/format/date-time.ts). */
  expiresAt: string;
};

export const VERIFY_EMAIL_SUBJECT = "Confirm your e-mail address";

export default function VerifyEmail(props: VerifyEmailProps) {
  return (
    <MailLayout
      preview={`Confirm ${props.email} for your new account`}
      heading={VERIFY_EMAIL_SUBJECT}
      footer={
        <>
          The link works once and expires on {props.expiresAt}. If you did not create this account, ignore this e-mail: the address
          is not confirmed, and the account gets no mail until it is.
        </>
      }
    >
      <Text>Hello {props.name},</Text>
      <Text>
        An account at {SERVICE_NAME} was created with the address {props.email}. Confirm that the address is yours, so that people
        can send you permission requests.
      </Text>
      <ActionLink link={props.link} label="Confirm my address" />
    </MailLayout>
  );
}

VerifyEmail.PreviewProps = {
  name: "Alice Demo",
  email: "alice@example.com",
  link: "http://localhost:3000/verify-email?token=preview-token-not-valid",
  expiresAt: "29 Nov 2026, 14:05 UTC",
} satisfies VerifyEmailProps;
