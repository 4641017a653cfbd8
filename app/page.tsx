import { emailConfirmed } from "@/accounts/verify-email";
import { currentUser } from "@/auth/session";
import { signOutAllSessions } from "./actions";
import { Alert, Button, Card, Page, TextLink } from "./components/ui";
import { ConfirmNotice } from "./verify-email/confirm-notice";

const ERRORS: Record<string, string> = {
  unauthorized_client: "has no redirect URI registered, so it cannot receive a token through the browser.",
};

export default async function Home({ searchParams }: { searchParams: Promise<{ error?: string; client?: string }> }) {
  const params = await searchParams;
  const user = await currentUser();
  const confirmed = user ? await emailConfirmed(user.id) : true;
  return (
    <Page title="Bundle permissions">
      {params.error ? (
        <Alert>
          The application {params.client ? <strong>{params.client}</strong> : null} {ERRORS[params.error] ?? `could not be authorized (${params.error}).`}
        </Alert>
      ) : null}
      <p className="text-slate-700 dark:text-slate-300">
        An OAuth 2 authorization server. Apps sign you in here, you decide what they may do, and people can ask you to let someone
        into one of your bundles by an e-mailed link.
      </p>
      {user && !confirmed ? <ConfirmNotice email={user.email} /> : null}
      {user ? (
        <Card className="space-y-2">
          <p>
            Signed in as <strong>{user.name}</strong> ({user.email}).
          </p>
          <ul className="list-disc space-y-1 pl-5">
            <li>
              <TextLink href="/settings/apps">Connected apps</TextLink>: see and disconnect the apps that can use your account.
            </li>
            <li>
              <TextLink href="/settings/clients">Your clients</TextLink>: register apps of your own.
            </li>
            <li>
              <TextLink href="/settings/sharing">Sharing</TextLink>: your bundles, who may read them, and permission requests.
            </li>
          </ul>
          <form action={signOutAllSessions} className="pt-2">
            <Button type="submit" variant="secondary">
              Sign out everywhere
            </Button>
          </form>
        </Card>
      ) : (
        <Card>
          <p>
            <TextLink href="/login">Sign in</TextLink> or <TextLink href="/signup">create an account</TextLink>.
          </p>
        </Card>
      )}
    </Page>
  );
}
