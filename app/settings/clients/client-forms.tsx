"use client";

import { useState } from "react";
import { ConfirmAction, ConfirmDialog } from "../../components/confirm";
import { CopyButton } from "../../components/copy-button";
import { FormOutcome, useServerForm } from "../../components/forms";
import { Alert, Button, Field, SelectField, TextAreaField } from "../../components/ui";
import { editClient, registerClient, removeClient, rotateSecret } from "./actions";

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
            <Copyable label="issuer" value={registered.tryIt.issuer} testId="new-client-issuer" />
            {registered.tryIt.authorizationUrl ? <Copyable label="Authorization URL to try" value={registered.tryIt.authorizationUrl} testId="new-client-authorization-url" /> : null}
            {registered.tryIt.codeVerifier ? <Copyable label="code_verifier" value={registered.tryIt.codeVerifier} testId="new-client-code-verifier" /> : null}
            {registered.tryIt.deviceEndpoint ? <Copyable label="Device authorization endpoint" value={registered.tryIt.deviceEndpoint} testId="new-client-device-endpoint" /> : null}
            {registered.tryIt.authorizationUrl ? null : <Copyable label="Token endpoint" value={registered.tryIt.tokenEndpoint} testId="new-client-token-endpoint" />}
          </dl>
          {registered.tryIt.authorizationUrl ? (
            <p className="mt-3">
              Open the authorization URL in a browser to sign in and approve as a user would: the browser then goes to the redirect URI with a <code className="font-mono">code</code>
              {registered.tryIt.codeVerifier ? <>, which the app exchanges at the token endpoint with the <code className="font-mono">code_verifier</code> above</> : null}. More on the <a href="/docs" className="font-medium underline underline-offset-2">developer page</a>.
            </p>
          ) : (
            <p className="mt-3">
              Examples for every grant, with this server&apos;s addresses, are on the <a href="/docs" className="font-medium underline underline-offset-2">developer page</a>.
            </p>
          )}
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

export type EditableClient = {
  clientId: string;
  name: string;
  grantType: string;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  backchannelLogoutUri: string | null;
  logoUri: string | null;
};

/**
 * "Edit" opens a form with the client's name and addresses as they are (docs/rules/pages.md#editing-a-client);
 * "Save changes" keeps the client_id, the secret and every connection. A refusal keeps what was typed and says
 * at the field what is wrong; a success closes the form and says so.
 */
export function EditClient({ client }: { client: EditableClient }) {
  const [open, setOpen] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);
  const { result, pending, ready, onSubmit, fieldError, formError } = useServerForm(async (form: FormData) => {
    const answer = await editClient(form);
    if (answer.ok) {
      setSaved(answer.message);
      setOpen(false);
    }
    return answer;
  }, { resetOnSuccess: false });
  const id = (field: string) => `edit-${client.clientId}-${field}`;
  const redirects = client.grantType === "authorization_code" || client.grantType === "implicit";
  return (
    <>
      <Button type="button" variant="secondary" aria-expanded={open} aria-controls={id("form")} aria-label={`Edit ${client.name}`} onClick={() => { setOpen(!open); setSaved(null); }}>
        Edit
      </Button>
      {saved && !open ? (
        <div className="order-last w-full">
          <Alert kind="success">{saved}</Alert>
        </div>
      ) : null}
      {open ? (
        <form id={id("form")} onSubmit={onSubmit} method="post" className="order-last w-full space-y-4 rounded-lg border border-slate-200 p-4 dark:border-slate-800" aria-label={`Edit ${client.name}`}>
          <input type="hidden" name="client_id" value={client.clientId} />
          <Field label="Name" name="name" id={id("name")} required maxLength={100} defaultValue={client.name} error={fieldError("name")} />
          {redirects ? (
            <>
              <TextAreaField label="Redirect URIs" name="redirect_uris" id={id("redirect-uris")} rows={3} className="font-mono text-sm" spellCheck={false} defaultValue={client.redirectUris.join("\n")} hint="One per line. Removing one only stops new sign-ins that name it: connections and tokens stay." error={fieldError("redirect_uris")} />
              <TextAreaField label="Post-logout redirect URIs" name="post_logout_redirect_uris" id={id("post-logout")} rows={2} className="font-mono text-sm" spellCheck={false} defaultValue={client.postLogoutRedirectUris.join("\n")} hint="Optional. One per line." error={fieldError("post_logout_redirect_uris")} />
            </>
          ) : null}
          {client.grantType === "authorization_code" ? (
            <Field label="Back-channel logout URI" name="backchannel_logout_uri" id={id("backchannel")} className="font-mono text-sm" spellCheck={false} defaultValue={client.backchannelLogoutUri ?? ""} hint="Optional." error={fieldError("backchannel_logout_uri")} />
          ) : null}
          <Field label="Logo URI" name="logo_uri" id={id("logo")} className="font-mono text-sm" spellCheck={false} defaultValue={client.logoUri ?? ""} hint="Optional. An https address of the app's logo." error={fieldError("logo_uri")} />
          <div className="flex flex-wrap gap-3">
            <Button type="submit" disabled={!ready}>
              {pending ? "Saving…" : "Save changes"}
            </Button>
            <Button type="button" variant="secondary" onClick={() => setOpen(false)}>
              Cancel
            </Button>
          </div>
          <FormOutcome result={result?.ok ? null : result} formError={formError} />
        </form>
      ) : null}
    </>
  );
}
