import type { Metadata } from "next";
import { listConnectedApps } from "@/grants/connected-apps";
import { SCOPE_DESCRIPTIONS } from "@/oauth/scope";
import { Button, Card, Page } from "../../components/ui";
import { requireUser } from "../require-user";
import { disconnect } from "./actions";

export const metadata: Metadata = { title: "Connected apps" };

export default async function AppsPage() {
  const user = await requireUser("/settings/apps");
  const apps = await listConnectedApps(user.id);
  return (
    <Page title="Connected apps">
      <p className="text-slate-700 dark:text-slate-300">Apps that can act on your account. Disconnecting one ends its access at once.</p>
      {apps.length === 0 ? <Card>No app has access to your account.</Card> : null}
      <ul className="space-y-4" aria-label="Connected apps">
        {apps.map((app) => (
          <li key={app.clientId}>
            <Card className="flex flex-col gap-3 sm:flex-row sm:items-start sm:justify-between">
              <div>
                <h2 className="font-semibold">{app.name}</h2>
                <p className="text-sm text-slate-600 dark:text-slate-400">by {app.ownerName} · last used {app.lastUsedAt.toISOString().slice(0, 16).replace("T", " ")} UTC</p>
                <ul className="mt-2 list-disc pl-5 text-sm">
                  {app.scopes.map((scope) => (
                    <li key={scope}>{SCOPE_DESCRIPTIONS[scope]}</li>
                  ))}
                </ul>
              </div>
              <form action={disconnect}>
                <input type="hidden" name="client_id" value={app.clientId} />
                <Button type="submit" variant="danger" aria-label={`Disconnect ${app.name}`}>
                  Disconnect
                </Button>
              </form>
            </Card>
          </li>
        ))}
      </ul>
    </Page>
  );
}
