"use client";

import { useCallback, useEffect, useState } from "react";
import { Alert, Button, Card, TextLink } from "../components/ui";

type Person = { id: number; name: string; email?: string };
type Request = {
  resource_uri: string;
  bundle: { name: string; owner: Person };
  user_allowed: Person;
  requested_by: Person;
  expires_at: string;
  status: string;
};
type State =
  | { kind: "loading" }
  | { kind: "ready"; request: Request }
  | { kind: "accepted"; request: Request }
  | { kind: "declined" }
  | { kind: "problem"; title: string; detail: string };

// The API includes an e-mail only where the viewer may see it (CONTRACT.md 14): here, the target sees the
// requester's, and the allowed user's when the requester named them by e-mail. Else the name and the id.
const person = (p: Person) => (p.email ? `${p.name} (${p.email})` : `${p.name} (user ${p.id})`);

/** What a refused check or redeem means for the person holding the link. */
function problem(status: number, error: string, userEmail: string): State {
  if (status === 403) return { kind: "problem", title: "This link is not for you", detail: `It was sent to someone else. You are signed in as ${userEmail}; sign out and open it again as the person it was sent to.` };
  if (status === 404) return { kind: "problem", title: "This link is not valid", detail: "The link is incomplete or the request no longer exists." };
  if (status === 410) {
    if (/redeemed/.test(error)) return { kind: "problem", title: "This link was already used", detail: "The request has been accepted; the access it asked for is in place." };
    if (/expired/.test(error)) return { kind: "problem", title: "This link has expired", detail: "Ask the person who sent it to make a new request." };
    if (/declined/.test(error)) return { kind: "problem", title: "This request was declined", detail: "It can no longer be accepted." };
    return { kind: "problem", title: "This request was withdrawn", detail: "The person who asked deleted it." };
  }
  return { kind: "problem", title: "Something went wrong", detail: error || `The server answered ${status}. Try again in a moment.` };
}

export function RedeemPanel({ token, userEmail }: { token: string; userEmail: string }) {
  const [state, setState] = useState<State>({ kind: "loading" });
  const [busy, setBusy] = useState(false);
  const url = `/api/bundle_permission_request/${encodeURIComponent(token)}/`;

  const call = useCallback(async (method: string, path: string) => {
    const res = await fetch(path, { method, headers: { Accept: "application/json" }, cache: "no-store" });
    const body = res.status === 204 ? null : ((await res.json().catch(() => ({}))) as Request & { error?: string });
    return { status: res.status, body };
  }, []);

  useEffect(() => {
    let live = true;
    void call("GET", url).then(({ status, body }) => {
      if (!live) return;
      setState(status === 200 && body ? { kind: "ready", request: body } : problem(status, body?.error ?? "", userEmail));
    });
    return () => {
      live = false;
    };
  }, [call, url, userEmail]);

  async function accept() {
    setBusy(true);
    const { status, body } = await call("PUT", url);
    setState(status === 200 && body ? { kind: "accepted", request: body } : problem(status, body?.error ?? "", userEmail));
    setBusy(false);
  }

  async function decline(request: Request) {
    setBusy(true);
    const { status, body } = await call("DELETE", request.resource_uri);
    setState(status === 204 ? { kind: "declined" } : problem(status, body?.error ?? "", userEmail));
    setBusy(false);
  }

  if (state.kind === "loading") return <p role="status">Checking the link…</p>;
  if (state.kind === "problem") {
    return (
      <Alert>
        <p className="font-semibold">{state.title}</p>
        <p className="mt-1">{state.detail}</p>
      </Alert>
    );
  }
  if (state.kind === "declined") return <Alert kind="info">You declined the request. Nobody was given access.</Alert>;
  const { request } = state;
  if (state.kind === "accepted") {
    return (
      <Alert kind="success">
        <p className="font-semibold">Accepted</p>
        <p className="mt-1">
          {person(request.user_allowed)} can now read the bundle “{request.bundle.name}”. You can revoke this on the <TextLink href="/settings/sharing">Sharing</TextLink> page.
        </p>
      </Alert>
    );
  }
  return (
    <Card className="space-y-4">
      <p>
        <strong>{person(request.requested_by)}</strong> asks you to let <strong>{person(request.user_allowed)}</strong> read your bundle{" "}
        <strong>“{request.bundle.name}”</strong>.
      </p>
      <p className="text-sm text-slate-600 dark:text-slate-400">This link works once and expires {new Date(request.expires_at).toUTCString()}.</p>
      <div className="flex gap-3">
        <Button type="button" onClick={accept} disabled={busy}>
          Accept
        </Button>
        <Button type="button" variant="secondary" onClick={() => decline(request)} disabled={busy}>
          Decline
        </Button>
      </div>
    </Card>
  );
}
