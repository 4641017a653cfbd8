// The password reset e-mail (docs/rules/accounts.md#password-reset): a single-use link to /reset-password,
// valid one hour. Opening the link changes nothing (mail scanners follow links): the page asks for the new
// password and only its POST changes it. Rendered by src/accounts/account-mail.ts (the name through noLinks(),
// and a second copy without the link for the outbox to keep once it was sent).
import { Text } from "@react-email/components";
import { SERVICE_NAME } from "@/site";
import { ActionLink, MailLayout } from "./layout";

export type ResetPasswordProps = {
  name: string;
  email: string;
  /** /reset-password with the single-use token in its `token` query argument; null in the stored copy. */
  link: string | null;
  /** Already formatted (src/format/date-time.ts). */
  expiresAt: string;
};

export const RESET_PASSWORD_SUBJECT = "Reset your password";

export default function ResetPassword(props: ResetPasswordProps) {
  return (
    <MailLayout
      preview={`Choose a new password for ${props.email}`}
      heading={RESET_PASSWORD_SUBJECT}
      footer={
        <>
          The link works once and expires on {props.expiresAt}. If you did not ask for it, ignore this e-mail: your password stays
          as it is.
        </>
      }
    >
      <Text>Hello {props.name},</Text>
      <Text>
        Someone, hopefully you, asked to reset the password of your account at {SERVICE_NAME} ({props.email}). Choose a new password
        with the link below. Changing it signs you out everywhere.
      </Text>
      <ActionLink link={props.link} label="Choose a new password" />
    </MailLayout>
  );
}

ResetPassword.PreviewProps = {
  name: "Alice Demo",
  email: "alice@example.com",
  link: "http://localhost:3000/reset-password?token=preview-token-not-valid",
  expiresAt: "29 Nov 2026, 14:05 UTC",
} satisfies ResetPasswordProps;
