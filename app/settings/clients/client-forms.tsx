"use client";

import { useState } from "react";
import { ConfirmAction, ConfirmDialog } from "../../components/confirm";
import { CopyButton } from "../../components/copy-button";
import { FormOutcome, useServerForm } from "../../components/forms";
import { Alert, Button, Field, SelectField, TextAreaField } from "../../components/ui";
import { registerClient, removeClient, rotateSecret } from "./actions";

/** A value to copy (client_id, a secret shown once), on its own line with its Copy button. */
function Copyable({ label, value, testId }: { label: string; value: string; testId: string }) {
  return (
    <div className="space-y-1">
      <dt className="text-xs font-semibold">{label}</dt>
      <dd className="flex flex-wrap items-center gap-x-3 gap-y-1">
        <code data-testid={testId} className="font-mono text-xs break-all">
          {value}
        </code>
        <CopyButton value={value} label={`Copy ${label}`} />
      </dd>
    </div>
  );
}

export function RegisterClientForm() {
  const { result, pending, ready, onSubmit, fieldError, formError } = useServerForm(registerClient);
  const registered = result?.ok ? result.client : undefined;
  return (
    <form onSubmit={onSubmit} method="post" className="space-y-4">
      <Field label="Name" name="name" required maxLength={100} error={fieldError("name")} />
      <SelectField label="Grant type" name="grant_type" defaultValue="authorization_code" error={fieldError("grant_type")}>
        <option value="authorization_code">Authorization code (server-side web app)</option>
        <option value="implicit">Implicit (browser or mobile app)</option>
        <option value="password">Password (your own scripts)</option>
        <option value="client_credentials">Client credentials (your own server, acting for you)</option>
        <option value="device_code">Device (TVs, command-line tools: the code is typed in here)</option>
      </SelectField>
      <TextAreaField
        label="Redirect URIs"
        name="redirect_uris"
        rows={3}
        className="font-mono text-sm"
        spellCheck={false}
        hint="One per line. https only, or http on localhost, 127.0.0.1 or [::1]. Only for authorization code and implicit clients."
        error={fieldError("redirect_uris")}
      />
      <TextAreaField
        label="Post-logout redirect URIs"
        name="post_logout_redirect_uris"
        rows={2}
        className="font-mono text-sm"
        spellCheck={false}
        hint="Optional. One per line: where the sign-out endpoint may send people back after signing out (matched exactly). Authorization code and implicit clients."
        error={fieldError("post_logout_redirect_uris")}
      />
      <Field
        label="Back-channel logout URI"
        name="backchannel_logout_uri"
        className="font-mono text-sm"
        spellCheck={false}
        hint="Optional. Where logout tokens are posted when someone who signed in to the app signs out here. Authorization code clients."
        error={fieldError("backchannel_logout_uri")}
      />
      <TextAreaField
        label="Public keys (JWK Set)"
        name="jwks"
        rows={3}
        className="font-mono text-sm"
        spellCheck={false}
        hint='Optional, for a client that signs a JWT instead of sending a secret (private_key_jwt): {"keys": [...]}, public keys only. The client then gets no secret.'
        error={fieldError("jwks")}
      />
      <div className="space-y-1">
        <div className="flex items-center gap-2">
          <input id="public" name="public" type="checkbox" className="h-4 w-4" aria-invalid={fieldError("public") ? true : undefined} aria-describedby={fieldError("public") ? "public-error" : undefined} />
          <label htmlFor="public" className="text-sm">
            Public client (a native app or device that cannot keep a secret; PKCE is then required for authorization code)
          </label>
        </div>
        {fieldError("public") ? (
          <p id="public-error" className="text-sm font-medium text-red-700 dark:text-red-400">
            {fieldError("public")}
          </p>
        ) : null}
      </div>
      <Button type="submit" disabled={!ready}>
        {pending ? "Registering…" : "Register client"}
      </Button>
      <FormOutcome result={null} formError={formError} />
      {registered ? (
        <Alert kind="success">
          <p className="font-semibold">Registered {registered.name}.</p>
          <p className="mt-1">{registered.clientSecret ? "Copy the secret now: it will not be shown again." : registered.signsJwt ? "It signs a JWT with its keys instead of sending a secret: it has no secret." : "A public client has no secret."}</p>
          <dl className="mt-3 space-y-2">
            <Copyable label="client_id" value={registered.clientId} testId="new-client-id" />
            {registered.clientSecret ? <Copyable label="client_secret" value={registered.clientSecret} testId="new-client-secret" /> : null}
          </dl>
        </Alert>
      ) : null}
    </form>
  );
}

export function ClientIdLine({ clientId }: { clientId: string }) {
  return (
    <dl>
      <Copyable label="client_id" value={clientId} testId="client-id" />
    </dl>
  );
}

export function RotateSecret({ clientId, name }: { clientId: string; name: string }) {
  const [result, setResult] = useState<Awaited<ReturnType<typeof rotateSecret>> | null>(null);
  return (
    <div className="space-y-2">
      <ConfirmDialog
        label="Rotate secret"
        ariaLabel={`Rotate secret of ${name}`}
        title={`Rotate the secret of ${name}?`}
        confirmLabel="Rotate secret"
        onConfirm={async () => {
          const form = new FormData();
          form.set("client_id", clientId);
          setResult(await rotateSecret(form));
        }}
      >
        <p>A new secret is made, and the current one stops working at once: {name} cannot get tokens until it is given the new one.</p>
      </ConfirmDialog>
      {result ? (
        <Alert kind={result.ok ? "success" : "error"}>
          <p>{result.message}</p>
          {result.clientSecret ? (
            <dl className="mt-3">
              <Copyable label="client_secret" value={result.clientSecret} testId="new-client-secret" />
            </dl>
          ) : null}
        </Alert>
      ) : null}
    </div>
  );
}

export function DeleteClient({ clientId, name }: { clientId: string; name: string }) {
  return (
    <ConfirmAction
      action={removeClient}
      fields={{ client_id: clientId, name }}
      label="Delete"
      ariaLabel={`Delete ${name}`}
      title={`Delete ${name}?`}
      confirmLabel="Delete client"
    >
      <p>Everyone who connected {name} to their account loses that connection at once, and every token it holds stops working.</p>
      <p>This cannot be undone.</p>
    </ConfirmAction>
  );
}
