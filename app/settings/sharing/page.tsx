import type { Metadata } from "next";
import type { ReactNode } from "react";
import { bundleUri } from "@/bundles/represent";
import { env } from "@/env";
import { sharingOverview, SENT_REQUESTS_DAYS } from "@/sharing/overview";
import { personLabel, type Person } from "@/users/email-visibility";
import { BundleLink } from "../../components/bundle-link";
import { CopyButton } from "../../components/copy-button";
import { pageDateFormatter } from "../../components/reader";
import { StatusProvider } from "../../components/status";
import { Card, Page } from "../../components/ui";
import { askLinkPath } from "../../bundles/[id]/bundle-id";
import { requireUser } from "../require-user";
import { AcceptRequestButton, AskOwnerForm, CreateBundleForm, DeleteBundleButton, EndRequestButton, GiveUpButton, LetInForm, RevokeButton } from "./sharing-forms";

export const metadata: Metadata = { title: "Sharing" };

// Who is who, under the e-mail visibility rule (docs/rules/permission-requests.md#who-sees-an-e-mail-address):
// an e-mail only where the viewer may see it, else the name and the user's id (names are chosen freely and
// need not be unique).
const who = (person: Person) => personLabel(person);

const SECTIONS = [
  ["your-bundles", "Your bundles"],
  ["shared-with-you", "Shared with you"],
  ["requests-to-you", "Requests to you"],
  ["ask", "Ask for access"],
  ["requests-you-sent", "Requests you sent"],
] as const;

function Section({ id, title, intro, children }: { id: string; title: string; intro?: ReactNode; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className="scroll-mt-4 space-y-3">
      <h2 id={id} className="text-xl font-semibold">
        {title}
      </h2>
      {intro ? <p className="text-sm text-slate-700 dark:text-slate-300">{intro}</p> : null}
      {children}
    </section>
  );
}

const Empty = ({ children }: { children: ReactNode }) => <Card className="text-sm text-slate-700 dark:text-slate-300">{children}</Card>;

const STATUS_WORDS = { pending: "Waiting for an answer", redeemed: "Accepted", declined: "Declined", withdrawn: "Withdrawn", expired: "Expired" } as const;

export default async function SharingPage() {
  const user = await requireUser("/settings/sharing");
  const [{ bundles, allowedInto, sent, received }, format] = await Promise.all([sharingOverview(user.id), pageDateFormatter()]);
  const appUrl = env().appUrl;
  // The bundles this person may read, whose names link to their page (others would be the 404 page).
  const readable = new Set([...bundles.map((bundle) => bundle.id), ...allowedInto.map((access) => access.bundle.id)]);
  return (
    <Page title="Sharing" lead={<p>Your bundles and who may read them, the bundles others share with you, and requests for access.</p>}>
      <nav aria-label="On this page" className="text-sm">
        <ul className="flex flex-wrap gap-x-4 gap-y-1">
          {SECTIONS.map(([id, title]) => (
            <li key={id}>
              <a href={`#${id}`} className="font-medium text-blue-700 underline underline-offset-2 hover:no-underline dark:text-blue-400">
                {title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <StatusProvider>
        <Section id="your-bundles" title="Your bundles">
          {bundles.length === 0 ? <Empty>You do not own a bundle yet.</Empty> : null}
          {bundles.map((bundle) => {
            const link = `${appUrl}${bundleUri(bundle.id)}`;
            return (
              <Card key={bundle.id} className="space-y-3">
                <div className="flex flex-wrap items-start justify-between gap-3">
                  <div className="min-w-0">
                    <h3 className="font-semibold break-words">
                      <BundleLink id={bundle.id} name={bundle.name} />
                    </h3>
                    <p className="text-sm text-slate-600 dark:text-slate-400">
                      Bundle id <strong className="font-mono text-slate-900 dark:text-slate-100">{bundle.id}</strong> · created {format(bundle.createdAt)}
                    </p>
                    <p className="mt-1 flex flex-wrap items-center gap-x-2 text-xs text-slate-600 dark:text-slate-400">
                      <span>Link:</span>
                      <code className="font-mono break-all">{link}</code>
                      <CopyButton value={link} label={`Copy the link of ${bundle.name}`} />
                    </p>
                    <p className="mt-1 flex flex-wrap items-center gap-x-2 text-xs text-slate-600 dark:text-slate-400">
                      <span>Ask-for-access link (opens the request form filled in; it carries your e-mail address):</span>
                      <CopyButton value={`${appUrl}${askLinkPath(bundle.id, user.email)}`} label={`Copy the ask-for-access link of ${bundle.name}`} />
                    </p>
                  </div>
                  <DeleteBundleButton bundleId={bundle.id} bundleName={bundle.name} people={bundle.permissions.length} />
                </div>
                {bundle.permissions.length === 0 ? (
                  <p className="text-sm text-slate-600 dark:text-slate-400">Only you can read it.</p>
                ) : (
                  <div>
                    <h4 className="text-sm font-semibold">Who may read it</h4>
                    <ul className="divide-y divide-slate-200 dark:divide-slate-800" aria-label={`Who may read ${bundle.name}`}>
                      {bundle.permissions.map((permission) => (
                        <li key={permission.id} className="flex flex-wrap items-center justify-between gap-2 py-2 text-sm">
                          <span>
                            {who(permission.person)} <span className="text-slate-600 dark:text-slate-400">since {format(permission.createdAt)}</span>
                          </span>
                          <RevokeButton permissionId={permission.id} person={{ name: permission.person.name, label: who(permission.person) }} bundleName={bundle.name} />
                        </li>
                      ))}
                    </ul>
                  </div>
                )}
              </Card>
            );
          })}
          <div className="grid items-start gap-4 md:grid-cols-2">
            <Card>
              <CreateBundleForm />
            </Card>
            <Card>
              <LetInForm bundles={bundles.map((bundle) => ({ id: bundle.id, name: bundle.name }))} />
            </Card>
          </div>
        </Section>

        <Section id="shared-with-you" title="Shared with you" intro="Bundles whose owners let you in. You can read them until the owner revokes your access, or you give it up.">
          {allowedInto.length === 0 ? <Empty>Nobody has let you into a bundle yet.</Empty> : null}
          {allowedInto.length > 0 ? (
            <ul className="space-y-3" aria-label="Bundles shared with you">
              {allowedInto.map((access) => (
                <li key={access.id}>
                  <Card className="flex flex-col gap-3 text-sm sm:flex-row sm:items-center sm:justify-between">
                    <div className="min-w-0 flex-1">
                      <p className="font-semibold break-words">
                        <BundleLink id={access.bundle.id} name={access.bundle.name} />
                      </p>
                      <p className="text-slate-600 dark:text-slate-400">
                        Bundle id {access.bundle.id} · owned by {who(access.owner)} · since {format(access.createdAt)}
                      </p>
                    </div>
                    <div className="shrink-0">
                      <GiveUpButton permissionId={access.id} bundleName={access.bundle.name} ownerName={access.owner.name} />
                    </div>
                  </Card>
                </li>
              ))}
            </ul>
          ) : null}
        </Section>

        <Section id="requests-to-you" title="Requests to you" intro="People asking you to let someone into one of your bundles. Accept here or with the link in the e-mail you received, or decline.">
          {received.length === 0 ? <Empty>No requests are waiting for you.</Empty> : null}
          {received.map((request) => {
            const summary =
              request.requestedBy.id === request.userAllowed.id
                ? `${who(request.requestedBy)} asks you for access to “${request.bundle.name}”.`
                : `${who(request.requestedBy)} asks you to let ${who(request.userAllowed)} read “${request.bundle.name}”.`;
            return (
              <Card key={request.id} className="flex flex-col gap-3 text-sm sm:flex-row sm:items-center sm:justify-between">
                <p className="min-w-0 flex-1">
                  {request.requestedBy.id === request.userAllowed.id ? (
                    <>
                      {who(request.requestedBy)} asks you for access to “<BundleLink id={request.bundle.id} name={request.bundle.name} />”.
                    </>
                  ) : (
                    <>
                      {who(request.requestedBy)} asks you to let {who(request.userAllowed)} read “<BundleLink id={request.bundle.id} name={request.bundle.name} />”.
                    </>
                  )}{" "}
                  <span className="text-slate-600 dark:text-slate-400">The link works until {format(request.expiresAt)}.</span>
                </p>
                <div className="flex shrink-0 flex-wrap gap-2">
                  <AcceptRequestButton requestId={request.id} bundleName={request.bundle.name} />
                  <EndRequestButton requestId={request.id} bundleName={request.bundle.name} mode="decline" summary={summary} />
                </div>
              </Card>
            );
          })}
        </Section>

        <Section id="ask" title="Ask for access" intro="Ask a bundle's owner to let you, or someone else, read it. The owner gets an e-mail with a link to accept.">
          <Card>
            <AskOwnerForm ownEmail={user.email} />
          </Card>
        </Section>

        <Section id="requests-you-sent" title="Requests you sent" intro={`From the last ${SENT_REQUESTS_DAYS} days.`}>
          {sent.length === 0 ? <Empty>You have not sent a request.</Empty> : null}
          {sent.map((request) => {
            const summary = `You asked ${who(request.userTarget)} to let ${request.userAllowed.id === user.id ? "you" : who(request.userAllowed)} read “${request.bundle.name}”.`;
            return (
              <Card key={request.id} className="flex flex-col gap-3 text-sm sm:flex-row sm:items-center sm:justify-between">
                <div className="min-w-0 flex-1">
                  <p>
                    You asked {who(request.userTarget)} to let {request.userAllowed.id === user.id ? "you" : who(request.userAllowed)} read “
                    {readable.has(request.bundle.id) ? <BundleLink id={request.bundle.id} name={request.bundle.name} /> : request.bundle.name}”.
                  </p>
                  <p className="text-slate-600 dark:text-slate-400">
                    <strong className="text-slate-900 dark:text-slate-100">{STATUS_WORDS[request.status]}</strong>
                    {request.status === "pending" ? ` · until ${format(request.expiresAt)}` : null}
                    {request.status === "redeemed" && request.redeemedAt ? ` · on ${format(request.redeemedAt)}` : null}
                    {request.status === "expired" ? ` · on ${format(request.expiresAt)}` : null}
                    {request.status === "declined" && request.endedAt ? ` · on ${format(request.endedAt)}: nobody was given access` : null}
                    {request.status === "withdrawn" && request.endedAt ? ` · by you on ${format(request.endedAt)}` : null}
                  </p>
                </div>
                {request.status === "pending" ? (
                  <div className="shrink-0">
                    <EndRequestButton requestId={request.id} bundleName={request.bundle.name} mode="withdraw" summary={summary} />
                  </div>
                ) : null}
              </Card>
            );
          })}
        </Section>
      </StatusProvider>
    </Page>
  );
}
