// What every mail of the service shares: the service's name at the top of the body (so that a reader knows
// who writes, whatever the sender line shows), one heading, and a footer that says why the mail came. The
// styles are inline (mail clients ignore style sheets). `data-skip-in-text` marks what the plain-text version
// leaves out, so that it gives each link once.
import { Body, Button, Container, Head, Heading, Hr, Html, Link, Preview, Section, Text } from "@react-email/components";
import type { ReactNode } from "react";
import { SERVICE_NAME } from "@/site";
import { LINK_REMOVED_NOTE } from "./link-removed";

const body = { backgroundColor: "#f6f7f9", color: "#0f172a", fontFamily: "-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif" };
const container = { backgroundColor: "#ffffff", margin: "24px auto", padding: "24px 32px", maxWidth: "560px", borderRadius: "8px" };
const brand = { color: "#1d4ed8", fontSize: "14px", fontWeight: 700, margin: "0 0 8px" };
const button = { backgroundColor: "#1d4ed8", color: "#ffffff", padding: "12px 20px", borderRadius: "6px", fontWeight: 600, textDecoration: "none" };
export const small = { color: "#475569", fontSize: "13px", lineHeight: "20px" };

export function MailLayout({ preview, heading, children, footer }: { preview: string; heading: string; children: ReactNode; footer: ReactNode }) {
  return (
    <Html lang="en">
      <Head />
      <Preview>{preview}</Preview>
      <Body style={body}>
        <Container style={container}>
          <Text style={brand}>{SERVICE_NAME}</Text>
          <Heading as="h1" style={{ fontSize: "20px", lineHeight: "28px" }}>
            {heading}
          </Heading>
          {children}
          <Hr />
          <Text style={small}>{footer}</Text>
        </Container>
      </Body>
    </Html>
  );
}

/**
 * The mail's single-use link: a button in HTML (with the address written out beside it for clients that do
 * not show buttons), the address once in plain text; or, in the copy the outbox keeps after sending, a note.
 */
export function ActionLink({ link, label }: { link: string | null; label: string }) {
  if (!link) return <Text style={small}>{LINK_REMOVED_NOTE}</Text>;
  return (
    <>
      <Section style={{ margin: "24px 0" }}>
        <Button href={link} style={button}>
          {label}
        </Button>
      </Section>
      <Text style={small} data-skip-in-text="true">
        If the button does not work, open this link: <Link href={link}>{link}</Link>
      </Text>
    </>
  );
}
