"use client";

import { useActionState, useEffect, useRef } from "react";
import { Alert, Button, Card, Field, TextLink } from "../components/ui";
import { signUp, type SignUpField, type SignUpState } from "./actions";

const initial: SignUpState = { ok: false, error: null, field: null, email: "", name: "" };

export function SignUpForm({ callbackUrl }: { callbackUrl: string }) {
  const [state, action, pending] = useActionState(signUp, initial);
  const fieldError = (name: SignUpField) => (state.field === name ? state.error : null);
  const form = useRef<HTMLFormElement>(null);
  // The field an error is about gets the focus, so that the message is read out with it.
  useEffect(() => {
    const field = state.field ? form.current?.elements.namedItem(state.field) : null;
    if (field instanceof HTMLElement) field.focus();
  }, [state]);

  if (state.ok) {
    // The same answer whether or not the address already had an account
    // (docs/rules/accounts.md#sign-up-and-confirmation).
    const signIn = `/login?${new URLSearchParams({ email: state.email, callbackUrl })}`;
    return (
      <Card className="space-y-3">
        <Alert kind="success">
          <p className="font-semibold">Check your e-mail</p>
          <p className="mt-1">
            We sent a message to <strong>{state.email}</strong>. If the address is new here, it holds a link that confirms it (valid 24
            hours); if it already has an account, the message says so.
          </p>
        </Alert>
        <p className="text-sm">
          <TextLink href={signIn}>Continue to sign in</TextLink>. Until you confirm your address, nobody can send you permission
          requests.
        </p>
      </Card>
    );
  }

  return (
    <Card>
      <form ref={form} action={action} className="space-y-4">
        {/* An error about one field is shown at that field (and focuses it); any other above the form. */}
        {state.error && !state.field ? <Alert>{state.error}</Alert> : null}
        <Field label="Name" name="name" autoComplete="name" defaultValue={state.name} maxLength={100} error={fieldError("name")} />
        <Field label="Email" name="email" type="email" autoComplete="email" required defaultValue={state.email} error={fieldError("email")} />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          minLength={8}
          maxLength={256}
          hint="At least 8 characters."
          error={fieldError("password")}
         
        />
        <Button type="submit" disabled={pending} className="w-full">
          {pending ? "Creating account…" : "Create account"}
        </Button>
      </form>
    </Card>
  );
}
