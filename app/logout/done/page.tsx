import type { Metadata } from "next";
import { Card, Page, TextLink } from "../../components/ui";

export const metadata: Metadata = { title: "Signed out" };

// Where the logout endpoint ends when the application gave no address to go back to
// (docs/rules/openid-connect.md#logout).
export default function SignedOutPage() {
  return (
    <Page title="You are signed out" narrow>
      <Card className="space-y-3">
        <p className="text-sm">You are no longer signed in to this browser. You can close this window, or:</p>
        <p className="text-sm">
          <TextLink href="/login">Sign in again</TextLink> · <TextLink href="/">Go to the home page</TextLink>
        </p>
      </Card>
    </Page>
  );
}
