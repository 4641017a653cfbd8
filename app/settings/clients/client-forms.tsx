"use client";

import { useActionState } from "react";
import { Alert, Button, Field } from "../../components/ui";
import { registerClient, rotateSecret, type SecretState } from "./actions";

const initial: SecretState = { error: null, clientId: null, clientSecret: null, name: null };

function SecretNotice({ state }: { state: SecretState }) {
  if (state.error) return <Alert>{state.error}</Alert>;
  if (!state.clientId) return null;
  return (
    <Alert kind="success">
      <p>{state.name ? `Registered ${state.name}.` : "New secret issued."} Copy the secret now: it will not be shown again.</p>
      <dl className="mt-2 grid grid-cols-[auto_1fr] gap-x-3 gap-y-1 font-mono text-xs break-all">
        <dt>client_id</dt>
        <dd data-testid="new-client-id">{state.clientId}</dd>
        <dt>client_secret</dt>
        <dd data-testid="new-client-secret">{state.clientSecret ?? "(none: public client)"}</dd>
      </dl>
    </Alert>
  );
}

export function RegisterClientForm() {
  const [state, action, pending] = useActionState(registerClient, initial);
  return (
    <form action={action} className="space-y-4">
      <SecretNotice state={state} />
      <Field label="Name" name="name" required maxLength={100} />
      <div className="space-y-1">
        <label htmlFor="grant_type" className="block text-sm font-medium">
          Grant type
        </label>
        <select id="grant_type" name="grant_type" className="block w-full rounded-lg border border-slate-300 bg-white px-3 py-2 dark:border-slate-700 dark:bg-slate-950" defaultValue="authorization_code">
          <option value="authorization_code">Authorization code (server-side web app)</option>
          <option value="implicit">Implicit (browser or mobile app)</option>
          <option value="password">Password (your own scripts)</option>
          <option value="client_credentials">Client credentials (your own server, acting for you)</option>
          <option value="device_code">Device (TVs, command-line tools: the code is typed in here)</option>
        </select>
      </div>
      <div className="space-y-1">
        <label htmlFor="redirect_uris" className="block text-sm font-medium">
          Redirect URIs
        </label>
        <textarea id="redirect_uris" name="redirect_uris" rows={3} className="block w-full rounded-lg border border-slate-300 bg-white px-3 py-2 font-mono text-sm dark:border-slate-700 dark:bg-slate-950" aria-describedby="redirect_uris_hint" />
        <p id="redirect_uris_hint" className="text-xs text-slate-500">
          One per line. https only, or http on localhost, 127.0.0.1 or [::1]. Only for authorization code and implicit clients.
        </p>
      </div>
      <div className="flex items-center gap-2">
        <input id="public" name="public" type="checkbox" className="h-4 w-4" />
        <label htmlFor="public" className="text-sm">
          Public client (a native app or device that cannot keep a secret; PKCE is then required for authorization code)
        </label>
      </div>
      <Button type="submit" disabled={pending}>
        Register client
      </Button>
    </form>
  );
}

export function RotateSecretForm({ clientId, name }: { clientId: string; name: string }) {
  const [state, action, pending] = useActionState(rotateSecret, initial);
  return (
    <form action={action} className="space-y-2">
      <SecretNotice state={state} />
      <input type="hidden" name="client_id" value={clientId} />
      <Button type="submit" variant="secondary" disabled={pending} aria-label={`Rotate the secret of ${name}`}>
        Rotate secret
      </Button>
    </form>
  );
}
