// The note to the owner of an existing account when someone signs up with its address (CONTRACT.md 14;
// issue 13 finding 7): sign-up answers the same whether or not the address has an account, and the owner is
// told instead. It holds no token. Rendered by src/accounts/account-mail.ts (the name through noLinks()).
import { Body, Container, Head, Heading, Hr, Html, Link, Preview, Text } from "@react-email/components";

export type SignupAttemptProps = {
  name: string;
  email: string;
  /** The sign-in page of the service. */
  signInUrl: string;
};

export const SIGNUP_ATTEMPT_SUBJECT = "Someone tried to create an account with your e-mail address";

const body = { backgroundColor: "#f6f7f9", fontFamily: "-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif" };
const container = { backgroundColor: "#ffffff", margin: "24px auto", padding: "24px 32px", maxWidth: "560px", borderRadius: "8px" };
const small = { color: "#555555", fontSize: "13px", lineHeight: "20px" };

export default function SignupAttempt(props: SignupAttemptProps) {
  return (
    <Html lang="en">
      <Head />
      <Preview>{SIGNUP_ATTEMPT_SUBJECT}</Preview>
      <Body style={body}>
        <Container style={container}>
          <Heading as="h1" style={{ fontSize: "20px" }}>
            {SIGNUP_ATTEMPT_SUBJECT}
          </Heading>
          <Text>Hello {props.name},</Text>
          <Text>
            Someone tried to create a new account with {props.email}. You already have an account with this address, so no new
            account was made and nothing about yours changed.
          </Text>
          <Text>
            If it was you, sign in instead: <Link href={props.signInUrl}>{props.signInUrl}</Link>
          </Text>
          <Hr />
          <Text style={small}>If it was not you, you can ignore this e-mail. Your password was not changed.</Text>
        </Container>
      </Body>
    </Html>
  );
}

SignupAttempt.PreviewProps = {
  name: "Alice Demo",
  email: "alice@example.com",
  signInUrl: "http://localhost:3000/login",
} satisfies SignupAttemptProps;
