"use client";

// The sharing page's forms (with the labels of docs/rules/pages.md#sharing). Each keeps what was typed when
// the answer is an error, and shows the error at the field it concerns (components/forms.tsx).
import { useTransition } from "react";
import { ConfirmAction } from "../../components/confirm";
import { FormOutcome, useServerForm } from "../../components/forms";
import { useHydrated } from "../../components/hydrated";
import { useAnnounce } from "../../components/status";
import { Button, Field, SelectField } from "../../components/ui";
import { acceptRequest, askOwnerAction, createBundleAction, deleteBundleAction, endRequest, letInAction, revokeAccess } from "./actions";

export function CreateBundleForm() {
  const { result, pending, ready, onSubmit, fieldError, formError } = useServerForm(createBundleAction);
  return (
    <form onSubmit={onSubmit} method="post" className="space-y-4" aria-labelledby="create-bundle">
      <h3 id="create-bundle" className="font-semibold">
        Create a bundle
      </h3>
      <Field label="Bundle name" name="name" id="bundle-name" required maxLength={200} error={fieldError("name")} />
      <Button type="submit" disabled={!ready}>
        {pending ? "Creating…" : "Create bundle"}
      </Button>
      <FormOutcome result={result} formError={formError} />
    </form>
  );
}

export function LetInForm({ bundles }: { bundles: { id: number; name: string }[] }) {
  const { result, pending, ready, onSubmit, fieldError, formError } = useServerForm(letInAction);
  return (
    <form onSubmit={onSubmit} method="post" className="space-y-4" aria-labelledby="let-in">
      <h3 id="let-in" className="font-semibold">
        Let someone in
      </h3>
      <p className="text-sm text-slate-700 dark:text-slate-300">They can read the bundle at once. They get no e-mail; tell them yourself.</p>
      <SelectField label="Your bundle" name="bundle" id="let-in-bundle" required defaultValue="" error={fieldError("bundle")} disabled={bundles.length === 0}>
        <option value="">Choose…</option>
        {bundles.map((bundle) => (
          <option key={bundle.id} value={bundle.id}>
            {bundle.name} (id {bundle.id})
          </option>
        ))}
      </SelectField>
      <Field label="E-mail of the person to let in" name="user_allowed" id="let-in-email" type="email" autoComplete="off" required error={fieldError("user_allowed")} />
      <Button type="submit" disabled={!ready || bundles.length === 0}>
        {pending ? "Letting in…" : "Let in"}
      </Button>
      {bundles.length === 0 ? <p className="text-sm text-slate-600 dark:text-slate-400">Create a bundle first.</p> : null}
      <FormOutcome result={result} formError={formError} />
    </form>
  );
}

export function AskOwnerForm({ ownEmail, owner, bundle }: { ownEmail: string; owner?: string; bundle?: string }) {
  const { result, pending, ready, onSubmit, fieldError, formError } = useServerForm(askOwnerAction);
  return (
    <form onSubmit={onSubmit} method="post" className="space-y-4">
      <Field label="Owner's e-mail" name="user_target" id="ask-owner" type="email" autoComplete="off" required defaultValue={owner} error={fieldError("user_target")} />
      <Field
        label="Bundle id or link"
        name="bundle"
        id="ask-bundle"
        required
        defaultValue={bundle}
        autoComplete="off"
        spellCheck={false}
        hint="The owner can tell you: it is shown beside each of their bundles."
        error={fieldError("bundle")}
      />
      <Field
        label="Person to let in"
        name="user_allowed"
        id="ask-person"
        type="email"
        autoComplete="off"
        required
        defaultValue={ownEmail}
        hint="Your own e-mail, or someone else's if you ask for them."
        error={fieldError("user_allowed")}
      />
      <Button type="submit" disabled={!ready}>
        {pending ? "Sending…" : "Send request"}
      </Button>
      <FormOutcome result={result} formError={formError} />
    </form>
  );
}

export function RevokeButton({ permissionId, person, bundleName }: { permissionId: number; person: { name: string; label: string }; bundleName: string }) {
  return (
    <ConfirmAction
      action={revokeAccess}
      fields={{ permission_id: permissionId, person: person.label, bundle_name: bundleName }}
      label="Revoke"
      ariaLabel={`Revoke ${person.name}'s access to ${bundleName}`}
      title={`Revoke ${person.name}'s access to “${bundleName}”?`}
      confirmLabel="Revoke access"
    >
      <p>{person.label} can no longer read the bundle, from now on. You can let them in again later.</p>
    </ConfirmAction>
  );
}

export function GiveUpButton({ permissionId, bundleName, ownerName }: { permissionId: number; bundleName: string; ownerName: string }) {
  return (
    <ConfirmAction
      action={revokeAccess}
      fields={{ permission_id: permissionId, bundle_name: bundleName, mode: "give_up" }}
      label="Give up access"
      ariaLabel={`Give up access to ${bundleName}`}
      title={`Give up your access to “${bundleName}”?`}
      confirmLabel="Give up access"
    >
      <p>You can no longer read it, from now on. Only {ownerName} can let you in again.</p>
    </ConfirmAction>
  );
}

export function DeleteBundleButton({ bundleId, bundleName, people }: { bundleId: number; bundleName: string; people: number }) {
  return (
    <ConfirmAction
      action={deleteBundleAction}
      fields={{ bundle_id: bundleId, bundle_name: bundleName }}
      label="Delete bundle"
      ariaLabel={`Delete bundle ${bundleName}`}
      title={`Delete “${bundleName}”?`}
      confirmLabel="Delete bundle"
    >
      <p>
        The bundle is deleted for good.{" "}
        {people === 0 ? "Nobody else can read it now." : people === 1 ? "The 1 person you let in loses access." : `The ${people} people you let in lose access.`} Requests for it
        end.
      </p>
    </ConfirmAction>
  );
}

export function EndRequestButton({ requestId, bundleName, mode, summary }: { requestId: number; bundleName: string; mode: "withdraw" | "decline"; summary: string }) {
  const decline = mode === "decline";
  return (
    <ConfirmAction
      action={endRequest}
      fields={{ request_id: requestId, bundle_name: bundleName, mode }}
      label={decline ? "Decline" : "Withdraw"}
      ariaLabel={decline ? `Decline the request for ${bundleName}` : `Withdraw your request for ${bundleName}`}
      title={decline ? "Decline this request?" : "Withdraw your request?"}
      confirmLabel={decline ? "Decline request" : "Withdraw request"}
    >
      <p>{summary}</p>
      <p>{decline ? "Nobody gets access, and the link in your e-mail stops working." : "The link in the owner's e-mail stops working."}</p>
    </ConfirmAction>
  );
}

/** Accept a request to you, as its mailed link does (docs/rules/pages.md#accepting-on-the-sharing-page). */
export function AcceptRequestButton({ requestId, bundleName }: { requestId: number; bundleName: string }) {
  const announce = useAnnounce();
  const [pending, startTransition] = useTransition();
  const hydrated = useHydrated();
  return (
    <Button
      type="button"
      aria-label={`Accept the request for ${bundleName}`}
      disabled={pending || !hydrated}
      onClick={() =>
        startTransition(async () => {
          const form = new FormData();
          form.set("request_id", String(requestId));
          form.set("bundle_name", bundleName);
          announce(await acceptRequest(form));
        })
      }
    >
      {pending ? "Accepting…" : "Accept"}
    </Button>
  );
}
