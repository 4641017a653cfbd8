import type { Metadata } from "next";
import { describeEvent, readableAddress } from "@/audit/describe-event";
import { ownSecurityEvents } from "@/audit/list-events";
import { pageDateFormatter } from "../../components/reader";
import { Card, Page } from "../../components/ui";
import { requireUser } from "../require-user";

export const metadata: Metadata = { title: "Security" };

// A compact list of the person's own security events (docs/rules/pages.md#security-activity): one row each, the
// event in words, then when (the pages' one date format) and from where (a readable client address).
export default async function SecurityPage() {
  const user = await requireUser("/settings/security");
  const [events, format] = await Promise.all([ownSecurityEvents(user.id), pageDateFormatter()]);
  return (
    <Page title="Security activity">
      <p className="text-slate-700 dark:text-slate-300">
        Recent sign-ins, apps that got access to your account, and other security events, newest first (kept 90 days). If something here was
        not you, change your password and disconnect the app on the Apps page.
      </p>
      {events.length === 0 ? <Card>Nothing has happened yet.</Card> : null}
      {events.length > 0 ? (
        <div className="rounded-xl border border-slate-200 bg-white shadow-sm dark:border-slate-800 dark:bg-slate-900">
          <ol className="divide-y divide-slate-200 text-sm dark:divide-slate-800" aria-label="Security events">
            {events.map((event) => (
              <li key={event.id} className="flex flex-col gap-x-4 gap-y-0.5 px-4 py-2 sm:flex-row sm:items-baseline sm:justify-between">
                <span className="min-w-0">{describeEvent(event)}</span>
                <span className="shrink-0 text-slate-600 dark:text-slate-400">
                  <time dateTime={event.at.toISOString()}>{format(event.at)}</time>
                  {event.ip ? ` · from ${readableAddress(event.ip)}` : ""}
                </span>
              </li>
            ))}
          </ol>
        </div>
      ) : null}
    </Page>
  );
}
