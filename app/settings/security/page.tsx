import type { Metadata } from "next";
import { describeEvent } from "@/audit/describe-event";
import { ownSecurityEvents } from "@/audit/list-events";
import { Card, Page } from "../../components/ui";
import { requireUser } from "../require-user";

export const metadata: Metadata = { title: "Security" };

export default async function SecurityPage() {
  const user = await requireUser("/settings/security");
  const events = await ownSecurityEvents(user.id);
  return (
    <Page title="Security activity">
      <p className="text-slate-700 dark:text-slate-300">
        Recent sign-ins, apps that got access to your account, and other security events, newest first (kept 90 days). If something here was
        not you, change your password and disconnect the app on the Apps page.
      </p>
      {events.length === 0 ? <Card>Nothing has happened yet.</Card> : null}
      <ol className="space-y-2" aria-label="Security events">
        {events.map((event) => (
          <li key={event.id}>
            <Card className="text-sm">
              <p>{describeEvent(event)}</p>
              <p className="mt-1 text-slate-600 dark:text-slate-400">
                <time dateTime={event.at.toISOString()}>{event.at.toISOString().slice(0, 16).replace("T", " ")} UTC</time>
                {event.ip ? ` · from ${event.ip}` : ""}
              </p>
            </Card>
          </li>
        ))}
      </ol>
    </Page>
  );
}
