import type { Metadata } from "next";
import { describePasswordReset } from "@/accounts/reset-password";
import { Alert, Card, Page, TextLink } from "../components/ui";
import { pageDateFormatter } from "../components/reader";
import { ResetForm } from "./reset-form";

export const metadata: Metadata = { title: "Choose a new password", robots: { index: false } };

// Where the reset mail leads (/reset-password?token=...). Opening it changes nothing (mail scanners follow
// links): it says which account the link is for, and what a reset does (docs/rules/accounts.md#password-reset:
// every session signed out, every app disconnected), and only the form's POST changes the password.
export default async function ResetPasswordPage({ searchParams }: { searchParams: Promise<{ token?: string | string[] }> }) {
  const raw = (await searchParams).token;
  const token = typeof raw === "string" ? raw : "";
  const [found, format] = await Promise.all([describePasswordReset(token), pageDateFormatter()]);
  return (
    <Page title="Choose a new password" narrow>
      {found.state === "ready" ? (
        <Card className="space-y-4">
          <p>
            For the account <strong>{found.email}</strong>. This link works once, until {format(found.expiresAt)}.
          </p>
          <p>
            Changing your password signs you out everywhere and disconnects every app you let use your account (they must ask for
            your permission again).
          </p>
          <ResetForm token={token} email={found.email} />
        </Card>
      ) : (
        <Alert>
          <p className="font-semibold">
            {found.state === "used" ? "This link was already used" : found.state === "expired" ? "This link has expired" : "This link is not valid"}
          </p>
          <p className="mt-1">
            <TextLink href="/forgot-password">Ask for a new link</TextLink>
          </p>
        </Alert>
      )}
    </Page>
  );
}
