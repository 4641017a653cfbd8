import type { Metadata } from "next";
import { describeVerification } from "@/accounts/verify-email";
import { pageDateFormatter } from "../components/reader";
import { Alert, Card, Page, TextLink } from "../components/ui";
import { ConfirmForm } from "./confirm-form";

export const metadata: Metadata = { title: "Confirm your e-mail address", robots: { index: false } };

// The page the confirmation mail links to (/verify-email?token=...;
// docs/rules/accounts.md#sign-up-and-confirmation). Opening it changes nothing (mail scanners follow links):
// it says what would be confirmed, and the button confirms.
export default async function VerifyEmailPage({ searchParams }: { searchParams: Promise<{ token?: string | string[] }> }) {
  const raw = (await searchParams).token;
  const token = typeof raw === "string" ? raw : "";
  const [found, format] = await Promise.all([describeVerification(token), pageDateFormatter()]);
  return (
    <Page title="Confirm your e-mail address" narrow>
      {found.state === "ready" ? (
        <Card className="space-y-4">
          <p>
            Confirm that <strong>{found.email}</strong> is your address, for the account “{found.name}” created on{" "}
            {format(found.createdAt)}.
          </p>
          <p className="text-sm text-slate-600 dark:text-slate-400">If you did not create this account, do not confirm: close this page.</p>
          <ConfirmForm token={token} email={found.email} />
        </Card>
      ) : found.state === "confirmed" ? (
        <Alert kind="info">
          {found.email} is already confirmed. <TextLink href="/">Continue</TextLink>
        </Alert>
      ) : (
        <Alert>
          <p className="font-semibold">
            {found.state === "used" ? "This link was already used" : found.state === "expired" ? "This link has expired" : "This link is not valid"}
          </p>
          <p className="mt-1">
            Sign in and ask for a new link on the <TextLink href="/">home page</TextLink>.
          </p>
        </Alert>
      )}
    </Page>
  );
}
