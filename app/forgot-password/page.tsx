import type { Metadata } from "next";
import { Page, TextLink } from "../components/ui";
import { ForgotForm } from "./forgot-form";

export const metadata: Metadata = { title: "Forgot your password?" };

// Asks for a reset link (src/accounts/request-password-reset.ts). Open to anyone; signed-in people too.
export default async function ForgotPasswordPage({ searchParams }: { searchParams: Promise<{ email?: string | string[] }> }) {
  const email = (await searchParams).email;
  return (
    <Page title="Forgot your password?" narrow lead={<p>Type the e-mail address of your account. We will send you a link to choose a new password.</p>}>
      <ForgotForm initialEmail={typeof email === "string" ? email.slice(0, 254) : ""} />
      <p className="text-sm">
        Remembered it? <TextLink href="/login">Sign in</TextLink>
      </p>
    </Page>
  );
}
