import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/auth/session";
import { loadLogoutConfirmation } from "@/logout/confirmation-screen";
import { Alert, Button, Card, Page } from "../components/ui";

export const metadata: Metadata = { title: "Sign out" };

// The logout endpoint's confirmation page (docs/rules/openid-connect.md#logout): shown when an application
// asks to sign out a browser whose signed-in person its id_token_hint does not name.
export default async function LogoutPage({ searchParams }: { searchParams: Promise<{ request?: string }> }) {
  const sealed = (await searchParams).request ?? "";
  const user = await currentUser();
  if (!user) redirect("/logout/done");
  const screen = await loadLogoutConfirmation(sealed, user);
  if (!screen) {
    return (
      <Page title="Request expired" narrow>
        <Alert>This sign-out request has expired or is not valid. Go back to the application and start again.</Alert>
      </Page>
    );
  }
  return (
    <Page title={`Sign out of ${screen.serviceName}?`} narrow>
      <Card className="space-y-5">
        <p className="text-sm">
          {screen.clientName ? (
            <>
              <strong>{screen.clientName}</strong> asks to sign you out.{" "}
            </>
          ) : (
            "An application asks to sign you out. "
          )}
          You are signed in as <strong>{user.email}</strong>.
        </p>
        <form method="post" action="/api/connect/oauth2/logout/confirm/" className="flex flex-wrap gap-3">
          <input type="hidden" name="request" value={sealed} />
          <input type="hidden" name="csrf" value={screen.csrf} />
          <Button type="submit" name="decision" value="sign_out">
            Sign out
          </Button>
          <Button type="submit" name="decision" value="stay" variant="secondary">
            Stay signed in
          </Button>
        </form>
      </Card>
    </Page>
  );
}
