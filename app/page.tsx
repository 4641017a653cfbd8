import Link from "next/link";
import { emailConfirmed } from "@/accounts/verify-email";
import { currentUser } from "@/auth/session";
import { SERVICE_NAME, SERVICE_PURPOSE } from "@/site";
import { signOutAllSessions } from "./actions";
import { Alert, Button, Card, DeveloperDetails, Page, TextLink } from "./components/ui";
import { ConfirmNotice } from "./verify-email/confirm-notice";

const ERRORS: Record<string, string> = {
  unauthorized_client: "has no redirect URI registered, so it cannot receive a token through the browser.",
};

type Search = Promise<{ error?: string; client?: string; client_id?: string; signed_out?: string }>;

const PLACES = [
  { href: "/settings/apps", title: "Apps", text: "The apps you allowed to use your account: what each may do, since when, and Disconnect." },
  { href: "/settings/sharing", title: "Sharing", text: "Your bundles and who may read them; let someone in, ask an owner for access, answer requests." },
  { href: "/settings/clients", title: "Clients", text: "Building an app? Register it here to get its client_id and secret." },
  { href: "/docs", title: "Developer documentation", text: "Endpoints, scopes and how to sign people in with this service." },
];

export default async function Home({ searchParams }: { searchParams: Search }) {
  const params = await searchParams;
  const user = await currentUser();
  const confirmed = user ? await emailConfirmed(user.id) : true;
  return (
    <Page title={SERVICE_NAME} lead={<p className="text-lg">{SERVICE_PURPOSE}</p>}>
      {params.error ? (
        <>
          <Alert>
            The application {params.client ? <strong>{params.client}</strong> : null}{" "}
            {ERRORS[params.error] ?? "could not be authorized."}
          </Alert>
          <DeveloperDetails facts={[["Error", params.error], ...(params.client_id ? [["client_id", params.client_id] as [string, string]] : [])]} />
        </>
      ) : null}
      {user && !confirmed ? <ConfirmNotice email={user.email} /> : null}
      {!user && params.signed_out === "1" ? (
        // A result page offers the next step (docs/rules/pages.md#next-steps): signing in again, below.
        <Alert kind="success">You signed out of this browser. Sign in again below, or close this window.</Alert>
      ) : null}
      {user ? (
        <>
          <p>
            Signed in as <strong>{user.name}</strong> ({user.email}).
          </p>
          <ul className="grid gap-4 sm:grid-cols-2">
            {PLACES.map((place) => (
              <li key={place.href}>
                <Link
                  href={place.href}
                  className="block h-full rounded-xl border border-slate-200 bg-white p-5 shadow-sm hover:border-blue-400 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-700 dark:border-slate-800 dark:bg-slate-900 dark:hover:border-blue-500"
                >
                  <span className="block font-semibold text-blue-800 dark:text-blue-300">{place.title}</span>
                  <span className="mt-1 block text-sm text-slate-700 dark:text-slate-300">{place.text}</span>
                </Link>
              </li>
            ))}
          </ul>
          <Card className="space-y-3" aria-labelledby="account-heading">
            <h2 id="account-heading" className="text-lg font-semibold">
              Signing out
            </h2>
            <p className="text-sm text-slate-700 dark:text-slate-300">
              <strong>Sign out</strong> (in the header) ends your session in this browser only.{" "}
              <strong>Sign out everywhere</strong> ends every session of your account, in every browser and on every device, for
              example after you used a shared computer. Apps you connected keep their access either way: disconnect them under{" "}
              <TextLink href="/settings/apps">Apps</TextLink>.
            </p>
            <form action={signOutAllSessions}>
              <Button type="submit" variant="secondary">
                Sign out everywhere
              </Button>
            </form>
          </Card>
        </>
      ) : (
        <>
          <ul className="space-y-3 text-slate-700 dark:text-slate-300">
            <li>
              <strong className="text-slate-900 dark:text-slate-100">Sign in to apps with one account.</strong> Each app asks you first
              and says what it wants to do; you can disconnect it whenever you like.
            </li>
            <li>
              <strong className="text-slate-900 dark:text-slate-100">Share bundles with people you choose.</strong> Let someone read a
              bundle of yours, or answer with one click when someone asks you by e-mail; take access back at any time.
            </li>
            <li>
              <strong className="text-slate-900 dark:text-slate-100">Building an app?</strong> Read the{" "}
              <TextLink href="/docs">developer documentation</TextLink>.
            </li>
          </ul>
          <div className="flex flex-wrap gap-3">
            <Link href="/login" className="inline-flex min-h-10 items-center rounded-lg bg-blue-700 px-4 py-2 text-sm font-semibold text-white hover:bg-blue-800 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-700">
              Sign in
            </Link>
            <Link
              href="/signup"
              className="inline-flex min-h-10 items-center rounded-lg border border-slate-300 bg-white px-4 py-2 text-sm font-semibold hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-700 dark:border-slate-600 dark:bg-slate-900 dark:hover:bg-slate-800"
            >
              Create an account
            </Link>
          </div>
        </>
      )}
    </Page>
  );
}
