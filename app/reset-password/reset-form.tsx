"use client";

import { useActionState } from "react";
import { Alert, Button, Field, TextLink } from "../components/ui";
import { chooseNewPassword, type ResetState } from "./actions";

export function ResetForm({ token, email }: { token: string; email: string }) {
  const [state, action, pending] = useActionState(chooseNewPassword, { result: null, error: null } satisfies ResetState);
  const result = state.result;
  if (result?.state === "reset") {
    return (
      <Alert kind="success">
        <p className="font-semibold">Your password was changed</p>
        <p className="mt-1">
          Every session of your account was signed out, and every app you had let use your account was disconnected: each must ask for
          your permission again. <TextLink href={`/login?email=${encodeURIComponent(result.email)}`}>Sign in with the new password</TextLink>.
        </p>
      </Alert>
    );
  }
  if (result) {
    // Another tab or a second click used the link first, or its hour ran out while the page was open.
    const why = result.state === "used" ? "It was already used." : result.state === "expired" ? "It has expired." : "It is not valid any more.";
    return (
      <Alert>
        <p className="font-semibold">This link can no longer be used</p>
        <p className="mt-1">
          {why} <TextLink href="/forgot-password">Ask for a new link</TextLink>.
        </p>
      </Alert>
    );
  }
  return (
    <form action={action} className="space-y-4">
      {/* For password managers: which account the new password belongs to. */}
      <input type="text" name="username" autoComplete="username" value={email} readOnly hidden />
      <input type="hidden" name="token" value={token} />
      <Field
        label="New password"
        name="password"
        type="password"
        autoComplete="new-password"
        required
        minLength={8}
        maxLength={256}
        autoFocus
        hint="At least 8 characters."
        error={state.error}
      />
      <Button type="submit" disabled={pending} className="w-full">
        {pending ? "Changing…" : "Change password"}
      </Button>
    </form>
  );
}
