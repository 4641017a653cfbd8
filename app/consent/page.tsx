import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { emailConfirmed } from "@/accounts/confirmed";
import { currentUser } from "@/auth/session";
import { loadConsentScreen, type ConsentScreen } from "@/consent/consent-screen";
import { ScopeList } from "../components/scope-list";
import { Alert, Button, Card, Page, TextLink } from "../components/ui";
import { SwitchAccount } from "./switch-account";

export const metadata: Metadata = { title: "Authorize application" };

/**
 * Who asks: the app's name and who registered it. Marks about the app (such as whether it is verified) go
 * here, next to its name, as further lines of this block.
 */
function AppIdentity({ screen }: { screen: ConsentScreen }) {
  return (
    <div>
      {/* eslint-disable-next-line @next/next/no-img-element -- a client's own https logo, verified clients only */}
      {screen.logoUri ? <img src={screen.logoUri} alt="" width={48} height={48} className="float-right ml-3" /> : null}
      {screen.documentHost ? (
        // docs/rules/tokens.md#client-id-metadata-documents: the host of its metadata document is who it is.
        <>
          <p className="text-lg font-semibold">{screen.documentHost}</p>
          <p className="text-sm text-slate-600 dark:text-slate-400">Calls itself “{screen.clientName}”; described by a document on {screen.documentHost}</p>
        </>
      ) : (
        <>
          <p className="text-lg font-semibold">{screen.clientName}</p>
          <p className="text-sm text-slate-600 dark:text-slate-400">{screen.ownerName ? `Registered by ${screen.ownerName}` : "Registered itself"}</p>
        </>
      )}
    </div>
  );
}

// The consent page of the authorization endpoint and of the device flow (docs/rules/tokens.md#consent). Inside
// the flow the header has no navigation (components/header-nav.tsx): the first stops of the Tab key are the
// account switch, Approve and Deny.
export default async function ConsentPage({ searchParams }: { searchParams: Promise<{ request?: string }> }) {
  const sealed = (await searchParams).request ?? "";
  const user = await currentUser();
  if (!user) redirect(`/login?callbackUrl=${encodeURIComponent(`/consent?request=${encodeURIComponent(sealed)}`)}`);
  const [screen, confirmed] = await Promise.all([loadConsentScreen(sealed, user.id), emailConfirmed(user.id)]);
  if (!screen) {
    return (
      <Page title="Request expired" narrow>
        <Alert>This authorization request has expired or is not valid. Go back to the application and start again.</Alert>
        <p className="text-sm">
          Next: start again in the application, or see the apps that can use your account under <TextLink href="/settings/apps">Apps</TextLink>.
        </p>
      </Page>
    );
  }
  return (
    <Page title={`Allow ${screen.documentHost ?? screen.clientName} to access your account?`} narrow>
      <Card className="space-y-5">
        <AppIdentity screen={screen} />
        <p className="text-sm">
          It asks for access to the account of <strong>{user.email}</strong>. Not you? <SwitchAccount restartUrl={screen.restartUrl} />
        </p>
        {confirmed ? null : (
          // An account whose address is not confirmed approves no app
          // (docs/rules/accounts.md#unconfirmed-accounts).
          <Alert>Confirm your e-mail address first: open the link we mailed you (or ask for a new one on the home page). Until then you cannot let apps use your account.</Alert>
        )}
        {screen.unverified ? (
          <Alert>
            {screen.documentHost
              ? `Unverified app: it describes itself in a document on ${screen.documentHost}, and nobody has checked who runs it or that its name is true.`
              : "Unverified app: it registered itself, and nobody has checked who runs it or that its name is true."}{" "}
            Approve only if you trust where you came from.
          </Alert>
        ) : null}
        <div className="space-y-2">
          <h2 className="text-sm font-semibold">It will be able to:</h2>
          <ScopeList scopes={screen.scopes} />
        </div>
        {screen.redirectHost ? (
          <p className="text-sm text-slate-700 dark:text-slate-300">
            After your decision you will be sent to <strong>{screen.redirectHost}</strong>.
          </p>
        ) : (
          <p className="text-sm text-slate-700 dark:text-slate-300">
            Approve only if you started this on your own device and it shows the code <strong className="font-mono">{screen.userCode}</strong>.
          </p>
        )}
        <form method="post" action="/consent/decide" className="flex flex-wrap gap-3">
          <input type="hidden" name="request" value={sealed} />
          <input type="hidden" name="csrf" value={screen.csrf} />
          {confirmed ? (
            <Button type="submit" name="decision" value="approve">
              Approve
            </Button>
          ) : null}
          <Button type="submit" name="decision" value="deny" variant="secondary">
            Deny
          </Button>
        </form>
        <p className="border-t border-slate-200 pt-4 text-sm text-slate-600 dark:border-slate-800 dark:text-slate-400">
          You can take this access back at any time: it is listed under Apps in your account, with Disconnect.
        </p>
      </Card>
    </Page>
  );
}
