import type { Metadata } from "next";
import { listConnectedApps } from "@/grants/connected-apps";
import { ConfirmAction } from "../../components/confirm";
import { pageDateFormatter } from "../../components/reader";
import { ScopeList } from "../../components/scope-list";
import { StatusProvider } from "../../components/status";
import { Card, Page } from "../../components/ui";
import { requireUser } from "../require-user";
import { disconnect } from "./actions";

export const metadata: Metadata = { title: "Apps" };

export default async function AppsPage() {
  const user = await requireUser("/settings/apps");
  const [apps, format] = await Promise.all([listConnectedApps(user.id), pageDateFormatter()]);
  return (
    <Page title="Apps" lead={<p>The apps you allowed to use your account, and what each may do. Disconnecting one ends its access at once.</p>}>
      <StatusProvider>
        {apps.length === 0 ? <Card>No app has access to your account.</Card> : null}
        <ul className="space-y-4" aria-label="Apps with access to your account">
          {apps.map((app) => (
            <li key={app.clientId}>
              <Card className="space-y-3">
                <div className="flex flex-wrap items-start justify-between gap-3">
                  <div>
                    <h2 className="font-semibold">{app.name}</h2>
                    <p className="text-sm text-slate-600 dark:text-slate-400">Registered by {app.ownerName}</p>
                  </div>
                  <ConfirmAction
                    action={disconnect}
                    fields={{ client_id: app.clientId, name: app.name }}
                    label="Disconnect"
                    ariaLabel={`Disconnect ${app.name}`}
                    title={`Disconnect ${app.name}?`}
                    confirmLabel="Disconnect"
                  >
                    <p>{app.name} loses access to your account at once: every token it holds stops working.</p>
                    <p>If you use it again, it will ask for your approval again.</p>
                  </ConfirmAction>
                </div>
                <ScopeList scopes={app.scopes} label={`What ${app.name} may do`} />
                <dl className="grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 text-sm text-slate-700 dark:text-slate-300">
                  <dt className="font-medium">{app.approvedAt ? "Approved" : "Connected"}</dt>
                  <dd>{format(app.approvedAt ?? app.since)}</dd>
                  <dt className="font-medium">Last used</dt>
                  <dd>{app.lastUsedAt ? format(app.lastUsedAt) : "Not yet"}</dd>
                </dl>
              </Card>
            </li>
          ))}
        </ul>
      </StatusProvider>
    </Page>
  );
}
