// The e-mail that asks a bundle's owner (user_target) to allow a user into it (SPEC.md 1, CONTRACT.md 6). It
// names the requester, the allowed user and the bundle, and carries the single-use link and its expiry.
// Rendered to HTML and plain text by src/email/permission-request-mail.ts, which passes the names through
// noLinks() (CONTRACT.md 14) and renders a second copy without the link to keep once the mail was sent;
// PreviewProps for `email dev`.
import { Body, Button, Container, Head, Heading, Hr, Html, Link, Preview, Section, Text } from "@react-email/components";
import { LINK_REMOVED_NOTE } from "./link-removed";

export type PermissionRequestEmailProps = {
  targetName: string;
  requesterName: string;
  /** Shown to the target so that they know who really asks (names are chosen freely; CONTRACT.md 14). */
  requesterEmail: string | null;
  allowedName: string;
  /** Only when the requester named the allowed user by e-mail (CONTRACT.md 14). */
  allowedEmail: string | null;
  /** The requester asks for access for themself. */
  requesterIsAllowed: boolean;
  bundleName: string;
  /** The redeem page with the single-use token in its `token` query argument; null in the stored copy. */
  link: string | null;
  /** When the link stops working, already formatted for people ("2026-11-29 14:05 UTC"). */
  expiresAt: string;
};

/** The one sentence the subject, the preview and the body share. */
export function permissionRequestSummary(props: Pick<PermissionRequestEmailProps, "requesterName" | "allowedName" | "requesterIsAllowed" | "bundleName">): string {
  return props.requesterIsAllowed
    ? `${props.requesterName} asks you for access to your bundle "${props.bundleName}"`
    : `${props.requesterName} asks you to give ${props.allowedName} access to your bundle "${props.bundleName}"`;
}


const body = { backgroundColor: "#f6f7f9", fontFamily: "-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif" };
const container = { backgroundColor: "#ffffff", margin: "24px auto", padding: "24px 32px", maxWidth: "560px", borderRadius: "8px" };
const button = { backgroundColor: "#1d4ed8", color: "#ffffff", padding: "12px 20px", borderRadius: "6px", fontWeight: 600, textDecoration: "none" };
const small = { color: "#555555", fontSize: "13px", lineHeight: "20px" };

export default function PermissionRequestEmail(props: PermissionRequestEmailProps) {
  const summary = permissionRequestSummary(props);
  return (
    <Html lang="en">
      <Head />
      <Preview>{summary}</Preview>
      <Body style={body}>
        <Container style={container}>
          <Heading as="h1" style={{ fontSize: "20px" }}>
            Access to &ldquo;{props.bundleName}&rdquo;
          </Heading>
          <Text>Hello {props.targetName},</Text>
          <Text>{summary}.</Text>
          <Text style={small}>
            Asked by {props.requesterName}
            {props.requesterEmail ? `, ${props.requesterEmail}` : null}
            {props.requesterIsAllowed ? null : props.allowedEmail ? `, for ${props.allowedName}, ${props.allowedEmail}` : `, for ${props.allowedName}`}.
          </Text>
          <Text>
            If you accept, {props.allowedName} will be able to read the bundle until you revoke the access. Nobody gets
            access unless you accept.
          </Text>
          {props.link ? (
            <>
              <Section style={{ margin: "24px 0" }}>
                <Button href={props.link} style={button}>
                  Review the request
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
            The link works once, only for you, and expires on {props.expiresAt}. If you do not know {props.requesterName},
            ignore this e-mail.
          </Text>
        </Container>
      </Body>
    </Html>
  );
}

PermissionRequestEmail.PreviewProps = {
  targetName: "Alice Demo",
  requesterName: "Bob Demo",
  requesterEmail: "bob@example.com",
  allowedName: "Carol Demo",
  allowedEmail: "carol@example.com",
  requesterIsAllowed: false,
  bundleName: "Alice's photos",
  link: "http://localhost:3000/redeem?token=preview-token-not-valid",
  expiresAt: "2026-11-29 14:05 UTC",
} satisfies PermissionRequestEmailProps;
