import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/auth/session";
import { loadConsentScreen } from "@/oauth/consent-screen";
import { SCOPE_DESCRIPTIONS } from "@/oauth/scope";
import { Alert, Button, Card, Page } from "../components/ui";

export const metadata: Metadata = { title: "Authorize application" };

export default async function ConsentPage({ searchParams }: { searchParams: Promise<{ request?: string }> }) {
  const sealed = (await searchParams).request ?? "";
  const user = await currentUser();
  if (!user) redirect(`/login?callbackUrl=${encodeURIComponent(`/consent?request=${encodeURIComponent(sealed)}`)}`);
  const screen = await loadConsentScreen(sealed, user.id);
  if (!screen) {
    return (
      <Page title="Request expired" narrow>
        <Alert>This authorization request has expired or is not valid. Go back to the application and start again.</Alert>
      </Page>
    );
  }
  return (
    <Page title={`Allow ${screen.clientName} to access your account?`} narrow>
      <Card className="space-y-4">
        <p>
          <strong>{screen.clientName}</strong>, registered by {screen.ownerName}, asks for access to the account of{" "}
          <strong>{user.email}</strong>.
        </p>
        <div>
          <h2 className="text-sm font-semibold">It will be able to:</h2>
          <ul className="mt-2 list-disc space-y-1 pl-5 text-sm">
            {screen.scopes.map((scope) => (
              <li key={scope}>{SCOPE_DESCRIPTIONS[scope]}</li>
            ))}
          </ul>
        </div>
        {screen.redirectHost ? (
          <p className="text-sm text-slate-600 dark:text-slate-400">
            After your decision you will be sent to <strong>{screen.redirectHost}</strong>.
          </p>
        ) : (
          <p className="text-sm text-slate-600 dark:text-slate-400">
            Approve only if you started this on your own device and it shows the code <strong className="font-mono">{screen.userCode}</strong>.
          </p>
        )}
        <form method="post" action="/consent/decide" className="flex gap-3">
          <input type="hidden" name="request" value={sealed} />
          <input type="hidden" name="csrf" value={screen.csrf} />
          <Button type="submit" name="decision" value="approve">
            Approve
          </Button>
          <Button type="submit" name="decision" value="deny" variant="secondary">
            Deny
          </Button>
        </form>
      </Card>
    </Page>
  );
}
