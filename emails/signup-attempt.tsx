// The note to the owner of an existing account when someone signs up with its address
// (docs/rules/accounts.md#sign-up-and-confirmation): sign-up answers the same whether or not the address has
// an account, and the owner is told instead. It holds no token. Rendered by src/accounts/account-mail.ts (the
// name through noLinks()).
import { Link, Text } from "@react-email/components";
import { SERVICE_NAME } from "@/site";
import { MailLayout } from "./layout";

export type SignupAttemptProps = {
  name: string;
  email: string;
  /** The sign-in page of the service. */
  signInUrl: string;
  /** The password reset page of the service. */
  resetUrl: string;
};

export const SIGNUP_ATTEMPT_SUBJECT = "Someone tried to create an account with your e-mail address";

export default function SignupAttempt(props: SignupAttemptProps) {
  return (
    <MailLayout preview={SIGNUP_ATTEMPT_SUBJECT} heading={SIGNUP_ATTEMPT_SUBJECT} footer="If it was not you, you can ignore this e-mail. Your password was not changed.">
      <Text>Hello {props.name},</Text>
      <Text>
        Someone tried to create a new account at {SERVICE_NAME} with {props.email}. You already have an account with this address, so
        no new account was made and nothing about yours changed.
      </Text>
      <Text>
        If it was you, sign in instead: <Link href={props.signInUrl}>{props.signInUrl}</Link>
      </Text>
      <Text>
        Forgot your password? Choose a new one here: <Link href={props.resetUrl}>{props.resetUrl}</Link>
      </Text>
    </MailLayout>
  );
}

SignupAttempt.PreviewProps = {
  name: "Alice Demo",
  email: "alice@example.com",
  signInUrl: "http://localhost:3000/login",
  resetUrl: "http://localhost:3000/forgot-password",
} satisfies SignupAttemptProps;
