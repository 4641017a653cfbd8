// The e-mail that confirms an address after sign-up (CONTRACT.md 14): a single-use link to /verify-email,
// valid 24 hours. The page confirms only when the reader presses its button (a POST): mail scanners follow
// links, and a GET never changes anything. Rendered by src/accounts/account-mail.ts, which passes the name
// through noLinks() and renders a second copy without the link for the outbox to keep once it was sent.
import { Body, Button, Container, Head, Heading, Hr, Html, Link, Preview, Section, Text } from "@react-email/components";
import { LINK_REMOVED_NOTE } from "./link-removed";

export type VerifyEmailProps = {
  name: string;
  email: string;
  /** /verify-email with the single-use token in its `token` query argument; null in the stored copy. */
  link: string | null;
  /** "2026-11-29 14:05 UTC" */
  expiresAt: string;
};

export const VERIFY_EMAIL_SUBJECT = "Confirm your e-mail address";

const body = { backgroundColor: "#f6f7f9", fontFamily: "-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif" };
const container = { backgroundColor: "#ffffff", margin: "24px auto", padding: "24px 32px", maxWidth: "560px", borderRadius: "8px" };
const button = { backgroundColor: "#1d4ed8", color: "#ffffff", padding: "12px 20px", borderRadius: "6px", fontWeight: 600, textDecoration: "none" };
const small = { color: "#555555", fontSize: "13px", lineHeight: "20px" };

export default function VerifyEmail(props: VerifyEmailProps) {
  return (
    <Html lang="en">
      <Head />
      <Preview>Confirm {props.email} for your new account</Preview>
      <Body style={body}>
        <Container style={container}>
          <Heading as="h1" style={{ fontSize: "20px" }}>
            {VERIFY_EMAIL_SUBJECT}
          </Heading>
          <Text>Hello {props.name},</Text>
          <Text>
            An account was created with the address {props.email}. Confirm that the address is yours, so that people can send you
            permission requests.
          </Text>
          {props.link ? (
            <>
              <Section style={{ margin: "24px 0" }}>
                <Button href={props.link} style={button}>
                  Confirm my address
                </Button>
              </Section>
              <Text style={small}>
                Or open this link: <Link href={props.link}>{props.link}</Link>
              </Text>
            </>
          ) : (
            <Text style={small}>{LINK_REMOVED_NOTE}</Text>
          )}
          <Hr />
          <Text style={small}>
            The link works once and expires on {props.expiresAt}. If you did not create this account, ignore this e-mail: the
            address is not confirmed, and the account gets no mail until it is.
          </Text>
        </Container>
      </Body>
    </Html>
  );
}

VerifyEmail.PreviewProps = {
  name: "Alice Demo",
  email: "alice@example.com",
  link: "http://localhost:3000/verify-email?token=preview-token-not-valid",
  expiresAt: "2026-11-29 14:05 UTC",
} satisfies VerifyEmailProps;
