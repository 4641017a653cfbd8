import type { Metadata } from "next";
import { notFound } from "next/navigation";
import type { ReactNode } from "react";
import { bundleUri } from "@/bundles/represent";
import { env } from "@/env";
import { bundleOverview } from "@/sharing/bundle-overview";
import { personLabel } from "@/users/email-visibility";
import { CopyButton } from "../../components/copy-button";
import { pageDateFormatter } from "../../components/reader";
import { StatusProvider } from "../../components/status";
import { Card, Page, TextLink } from "../../components/ui";
import { requireUser } from "../../settings/require-user";
import { AcceptRequestButton, EndRequestButton, GiveUpButton, RevokeButton } from "../../settings/sharing/sharing-forms";
import { askLinkPath, bundleIdOf } from "./bundle-id";

// The page of one bundle (docs/rules/pages.md#bundle-page): who may read it and the requests about it, for
// who may read it only (src/sharing/bundle-overview.ts); to anyone else the 404 page, as for a bundle that
// does not exist.
export const metadata: Metadata = { title: "Bundle" };

const STATUS_WORDS = { pending: "Waiting for an answer", redeemed: "Accepted", declined: "Declined", withdrawn: "Withdrawn", expired: "Expired" } as const;

function Section({ id, title, children }: { id: string; title: string; children: ReactNode }) {
  return (
    <section aria-labelledby={id} className="space-y-3">
      <h2 id={id} className="text-xl font-semibold">
        {title}
      </h2>
      {children}
    </section>
  );
}

export default async function BundlePage({ params }: { params: Promise<{ id: string }> }) {
  const { id: raw } = await params;
  const user = await requireUser(`/bundles/${encodeURIComponent(raw)}`);
  const id = bundleIdOf(raw);
  const bundle = id === null ? null : await bundleOverview(user.id, id);
  if (!bundle) notFound();
  const format = await pageDateFormatter();
  const appUrl = env().appUrl;
  const askLink = `${appUrl}${askLinkPath(bundle.id, user.email)}`;
  const you = (person: { id: number }) => person.id === user.id;
  const who = (person: Parameters<typeof personLabel>[0]) => (you(person) ? "you" : personLabel(person));
  return (
    <Page
      title={bundle.name}
      lead={
        <p>
          Bundle id <strong className="font-mono">{bundle.id}</strong> · {bundle.isOwner ? "yours" : `owned by ${personLabel(bundle.owner)}`} · created {format(bundle.createdAt)}
        </p>
      }
    >
      <StatusProvider>
        {bundle.isOwner ? (
          <Card className="space-y-3 text-sm">
            <h2 className="text-lg font-semibold">Ask-for-access link</h2>
            <p>Give this link to someone who should read the bundle: it opens the request form with the bundle and your e-mail address filled in, and you get an e-mail to accept or decline. It carries your e-mail address.</p>
            <p className="flex flex-wrap items-center gap-x-2 gap-y-1">
              <code className="font-mono text-xs break-all" data-testid="ask-link">
                {askLink}
              </code>
              <CopyButton value={askLink} label={`Copy the ask-for-access link of ${bundle.name}`} />
            </p>
            <p className="text-xs text-slate-600 dark:text-slate-400">
              For apps: the bundle&apos;s API address is <code className="font-mono break-all">{`${appUrl}${bundleUri(bundle.id)}`}</code>.
            </p>
          </Card>
        ) : null}

        <Section id="readers" title="Who may read it">
          <Card>
            <ul className="divide-y divide-slate-200 text-sm dark:divide-slate-800" aria-label={`Who may read ${bundle.name}`}>
              <li className="py-2">
                {bundle.isOwner ? "You" : personLabel(bundle.owner)} <span className="text-slate-600 dark:text-slate-400">(owner)</span>
              </li>
              {bundle.permissions.map((permission) => (
                <li key={permission.id} className="flex flex-wrap items-center justify-between gap-2 py-2">
                  <span>
                    {you(permission.person) ? "You" : personLabel(permission.person)} <span className="text-slate-600 dark:text-slate-400">since {format(permission.createdAt)}</span>
                  </span>
                  {bundle.isOwner ? (
                    <RevokeButton permissionId={permission.id} person={{ name: permission.person.name, label: personLabel(permission.person) }} bundleName={bundle.name} />
                  ) : you(permission.person) ? (
                    <GiveUpButton permissionId={permission.id} bundleName={bundle.name} ownerName={bundle.owner.name} />
                  ) : null}
                </li>
              ))}
            </ul>
            {bundle.isOwner && bundle.permissions.length === 0 ? <p className="mt-2 text-sm text-slate-600 dark:text-slate-400">Only you can read it.</p> : null}
            {!bundle.isOwner ? <p className="mt-2 text-sm text-slate-600 dark:text-slate-400">Only the owner sees everyone who may read it.</p> : null}
          </Card>
        </Section>

        <Section id="requests" title="Requests about it">
          {bundle.requests.length === 0 ? (
            <Card className="text-sm text-slate-700 dark:text-slate-300">{bundle.isOwner ? "Nobody has asked you for access to it." : "You have no request about it."}</Card>
          ) : (
            <ul className="space-y-3" aria-label={`Requests about ${bundle.name}`}>
              {bundle.requests.map((request) => {
                const summary = `${you(request.requestedBy) ? "You" : personLabel(request.requestedBy)} asked ${who(request.userTarget)} to let ${request.userAllowed.id === request.requestedBy.id && !you(request.requestedBy) ? "them" : who(request.userAllowed)} read “${bundle.name}”.`;
                const pending = request.status === "pending";
                return (
                  <li key={request.id}>
                    <Card className="flex flex-col gap-3 text-sm sm:flex-row sm:items-center sm:justify-between">
                      <div className="min-w-0 flex-1">
                        <p>{summary}</p>
                        <p className="text-slate-600 dark:text-slate-400">
                          <strong className="text-slate-900 dark:text-slate-100">{STATUS_WORDS[request.status]}</strong>
                          {pending ? ` · until ${format(request.expiresAt)}` : null}
                          {request.status === "redeemed" && request.redeemedAt ? ` · on ${format(request.redeemedAt)}` : null}
                          {request.status === "expired" ? ` · on ${format(request.expiresAt)}` : null}
                          {(request.status === "declined" || request.status === "withdrawn") && request.endedAt ? ` · on ${format(request.endedAt)}` : null}
                        </p>
                      </div>
                      {pending && you(request.userTarget) ? (
                        <div className="flex shrink-0 flex-wrap gap-2">
                          <AcceptRequestButton requestId={request.id} bundleName={bundle.name} />
                          <EndRequestButton requestId={request.id} bundleName={bundle.name} mode="decline" summary={summary} />
                        </div>
                      ) : pending && you(request.requestedBy) ? (
                        <div className="shrink-0">
                          <EndRequestButton requestId={request.id} bundleName={bundle.name} mode="withdraw" summary={summary} />
                        </div>
                      ) : null}
                    </Card>
                  </li>
                );
              })}
            </ul>
          )}
        </Section>
      </StatusProvider>
      <p className="text-sm">
        Next: <TextLink href="/settings/sharing">see all your bundles and requests on the Sharing page</TextLink>.
      </p>
    </Page>
  );
}
