"use client";

import { useState, useTransition, type ReactNode } from "react";
import { formatDateTime, type Reader } from "@/format/date-time";
import type { TokenView } from "@/permission-requests/describe-token";
import { BundleLink } from "../components/bundle-link";
import { ConfirmDialog } from "../components/confirm";
import { useHydrated } from "../components/hydrated";
import { Alert, Button, Card, TextLink } from "../components/ui";

type Request = Extract<TokenView, { request: unknown }>["request"];
type Person = { id: number; name: string; email?: string };
type State = TokenView | { state: "problem"; title: string; detail: string };

// The API includes an e-mail only where the viewer may see it
// (docs/rules/permission-requests.md#who-sees-an-e-mail-address): here, the target sees the requester's, and
// the allowed user's when the requester named them by e-mail. Else the name and the id.
const person = (p: Person) => (p.email ? `${p.name} (${p.email})` : `${p.name} (user ${p.id})`);

/** A refused accept or decline (someone else acted first, the link ended meanwhile). */
function problem(status: number, error: string): State {
  if (status === 410 && /redeemed/.test(error)) return { state: "problem", title: "This request was already accepted", detail: "The access it asked for is in place." };
  if (status === 410 && /expired/.test(error)) return { state: "problem", title: "This link has expired", detail: "Ask the person who sent it to make a new request." };
  if (status === 410) return { state: "problem", title: "This request has ended", detail: "It was declined or withdrawn meanwhile." };
  if (status === 404) return { state: "problem", title: "This request no longer exists", detail: "Its bundle may have been deleted." };
  return { state: "problem", title: "Something went wrong", detail: error || `The server answered ${status}. Try again in a moment.` };
}

export function RedeemPanel({ token, userEmail, initial, reader }: { token: string; userEmail: string; initial: TokenView; reader: Reader }) {
  const [view, setView] = useState<State>(initial);
  const [busy, startTransition] = useTransition();
  const hydrated = useHydrated();
  const date = (iso: string | null) => (iso ? formatDateTime(new Date(iso), reader) : "");

  async function call(method: string, path: string) {
    const res = await fetch(path, { method, headers: { Accept: "application/json" }, cache: "no-store" });
    const body = res.status === 204 ? null : ((await res.json().catch(() => ({}))) as Request & { error?: string });
    return { status: res.status, body };
  }

  function accept() {
    startTransition(async () => {
      const { status, body } = await call("PUT", `/api/bundle_permission_request/${encodeURIComponent(token)}/`);
      setView(status === 200 && body ? { state: "redeemed", request: body, endedAt: body.redeemed_at } : problem(status, body?.error ?? ""));
    });
  }

  async function decline(request: Request) {
    const { status, body } = await call("DELETE", request.resource_uri);
    setView(status === 204 ? { state: "declined", request, endedAt: new Date().toISOString() } : problem(status, body?.error ?? ""));
  }

  const ended = ((): ReactNode => {
  switch (view.state) {
    case "unknown":
      return (
        <Alert>
          <p className="font-semibold">This link is not valid</p>
          <p className="mt-1">The link is incomplete, or the request no longer exists (its bundle may have been deleted).</p>
        </Alert>
      );
    case "not_for_you":
      return (
        <Alert>
          <p className="font-semibold">This link is not for you</p>
          <p className="mt-1">It was sent to someone else. You are signed in as {userEmail}; sign out and open it again as the person it was sent to.</p>
        </Alert>
      );
    case "problem":
      return (
        <Alert>
          <p className="font-semibold">{view.title}</p>
          <p className="mt-1">{view.detail}</p>
        </Alert>
      );
    case "redeemed":
      return (
        <Alert kind="success">
          <p className="font-semibold">Accepted</p>
          <p className="mt-1">
            {person(view.request.user_allowed)} can read your bundle “<BundleLink id={view.request.bundle.id} name={view.request.bundle.name} />” since {date(view.request.redeemed_at ?? view.endedAt)}. You can revoke
            this on the <TextLink href="/settings/sharing">Sharing</TextLink> page.
          </p>
        </Alert>
      );
    case "declined":
      return (
        <Alert kind="info">
          <p className="font-semibold">This request was declined</p>
          <p className="mt-1">You declined the request{view.endedAt ? ` on ${date(view.endedAt)}` : ""}. Nobody was given access.</p>
        </Alert>
      );
    case "withdrawn":
      return (
        <Alert kind="info">
          <p className="font-semibold">This request was withdrawn</p>
          <p className="mt-1">{person(view.request.requested_by)} withdrew it. Nothing changed.</p>
        </Alert>
      );
    case "expired":
      return (
        <Alert kind="info">
          <p className="font-semibold">This link has expired</p>
          <p className="mt-1">
            It worked until {date(view.request.expires_at)}. Ask {person(view.request.requested_by)} to make a new request if you still want to answer it.
          </p>
        </Alert>
      );
  }
  return null;
  })();
  // Every ended state offers the next step (docs/rules/pages.md#next-steps).
  if (view.state !== "pending") {
    return (
      <div className="space-y-4">
        {ended}
        <NextSteps />
      </div>
    );
  }
  const { request } = view;
  const forThemself = request.requested_by.id === request.user_allowed.id;
  const summary = forThemself
    ? `${person(request.requested_by)} asks you for access to your bundle “${request.bundle.name}”.`
    : `${person(request.requested_by)} asks you to let ${person(request.user_allowed)} read your bundle “${request.bundle.name}”.`;
  return (
    <Card className="space-y-4">
      {forThemself ? (
        <p>
          <strong>{person(request.requested_by)}</strong> asks you for access to your bundle <strong>“<BundleLink id={request.bundle.id} name={request.bundle.name} />”</strong>.
        </p>
      ) : (
        <p>
          <strong>{person(request.requested_by)}</strong> asks you to let <strong>{person(request.user_allowed)}</strong> read your bundle{" "}
          <strong>“<BundleLink id={request.bundle.id} name={request.bundle.name} />”</strong>.
        </p>
      )}
      <p className="text-sm text-slate-700 dark:text-slate-300">If you accept, they can read the bundle until you revoke the access. This link works once, until {date(request.expires_at)}.</p>
      <div className="flex flex-wrap gap-3">
        <Button type="button" onClick={accept} disabled={busy || !hydrated}>
          {busy ? "Accepting…" : "Accept"}
        </Button>
        <ConfirmDialog label="Decline" title="Decline this request?" confirmLabel="Decline request" onConfirm={() => decline(request)}>
          <p>{summary}</p>
          <p>Nobody gets access, and this link stops working.</p>
        </ConfirmDialog>
      </div>
    </Card>
  );
}

/** Where to go from a request that ended: the person's sharing page, where their bundles and requests are. */
function NextSteps() {
  return (
    <p className="text-sm">
      Next: <TextLink href="/settings/sharing">see your bundles and requests on the Sharing page</TextLink>.
    </p>
  );
}
