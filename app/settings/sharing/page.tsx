import type { Metadata } from "next";
import { sharingOverview } from "@/sharing/overview";
import { personLabel } from "@/users/email-visibility";
import { Button, Card, Page } from "../../components/ui";
import { requireUser } from "../require-user";
import { endRequest, revokeAccess } from "./actions";

export const metadata: Metadata = { title: "Sharing" };

// Who is who, under the e-mail visibility rule (CONTRACT.md 14): an e-mail only where the viewer may see it,
// else the name and the user's id (names are chosen freely and need not be unique).
const who = personLabel;
const day = (d: Date) => d.toISOString().slice(0, 10);

export default async function SharingPage() {
  const user = await requireUser("/settings/sharing");
  const { bundles, sent, received } = await sharingOverview(user.id);
  return (
    <Page title="Sharing">
      <section aria-labelledby="bundles" className="space-y-3">
        <h2 id="bundles" className="text-lg font-semibold">Your bundles</h2>
        {bundles.length === 0 ? <Card>You do not own a bundle yet.</Card> : null}
        {bundles.map((bundle) => (
          <Card key={bundle.id} className="space-y-2">
            <h3 className="font-semibold">{bundle.name}</h3>
            {bundle.permissions.length === 0 ? (
              <p className="text-sm text-slate-600 dark:text-slate-400">Only you can read it.</p>
            ) : (
              <ul className="divide-y divide-slate-200 dark:divide-slate-800" aria-label={`Who may read ${bundle.name}`}>
                {bundle.permissions.map((permission) => (
                  <li key={permission.id} className="flex flex-wrap items-center justify-between gap-2 py-2 text-sm">
                    <span>
                      {who(permission.person)} <span className="text-slate-500">since {day(permission.createdAt)}</span>
                    </span>
                    <form action={revokeAccess}>
                      <input type="hidden" name="permission_id" value={permission.id} />
                      <Button type="submit" variant="secondary" aria-label={`Revoke ${permission.person.name}'s access to ${bundle.name}`}>
                        Revoke
                      </Button>
                    </form>
                  </li>
                ))}
              </ul>
            )}
          </Card>
        ))}
      </section>

      <section aria-labelledby="received" className="space-y-3">
        <h2 id="received" className="text-lg font-semibold">Requests to you</h2>
        {received.length === 0 ? <Card>No pending requests.</Card> : null}
        {received.map((request) => (
          <Card key={request.id} className="flex flex-wrap items-center justify-between gap-3 text-sm">
            <p>
              {who(request.requestedBy)} asks you to let {who(request.userAllowed)} read “{request.bundleName}”. To accept, open the link in the e-mail you received
              (until {day(request.expiresAt)}).
            </p>
            <form action={endRequest}>
              <input type="hidden" name="request_id" value={request.id} />
              <Button type="submit" variant="secondary">Decline</Button>
            </form>
          </Card>
        ))}
      </section>

      <section aria-labelledby="sent" className="space-y-3">
        <h2 id="sent" className="text-lg font-semibold">Requests you sent</h2>
        {sent.length === 0 ? <Card>No pending requests.</Card> : null}
        {sent.map((request) => (
          <Card key={request.id} className="flex flex-wrap items-center justify-between gap-3 text-sm">
            <p>
              You asked {who(request.userTarget)} to let {who(request.userAllowed)} read “{request.bundleName}” (until {day(request.expiresAt)}).
            </p>
            <form action={endRequest}>
              <input type="hidden" name="request_id" value={request.id} />
              <Button type="submit" variant="secondary">Cancel</Button>
            </form>
          </Card>
        ))}
      </section>
    </Page>
  );
}
