"use client";

import { useActionState } from "react";
import { Alert, Button, Card, Field, TextLink } from "../components/ui";
import { askForResetLink, type ForgotState } from "./actions";

export function ForgotForm({ initialEmail }: { initialEmail: string }) {
  const [state, action, pending] = useActionState(askForResetLink, { sent: false, email: initialEmail, error: null } satisfies ForgotState);
  if (state.sent) {
    // The same answer whether or not the address has an account (docs/rules/accounts.md#password-reset).
    return (
      <Card className="space-y-3">
        <Alert kind="success">
          <p className="font-semibold">Check your e-mail</p>
          <p className="mt-1">
            If an account uses <strong>{state.email}</strong>, we sent it a link to choose a new password. The link works once, for one
            hour. Nothing arrived? Look in your spam folder, or check the address and ask again.
          </p>
        </Alert>
        <p className="text-sm">
          <TextLink href="/login">Back to sign in</TextLink>
        </p>
      </Card>
    );
  }
  return (
    <Card>
      <form action={action} className="space-y-4">
        {state.error ? <Alert>{state.error}</Alert> : null}
        <Field label="Email" name="email" type="email" autoComplete="email" required autoFocus defaultValue={state.email} />
        <Button type="submit" disabled={pending} className="w-full">
          {pending ? "Sending…" : "Send me a reset link"}
        </Button>
      </form>
    </Card>
  );
}
