"use client";

import { useActionState } from "react";
import { Alert, Button, Card, Field, TextLink } from "../components/ui";
import { signUp, type SignUpState } from "./actions";

const initial: SignUpState = { ok: false, error: null, email: "", name: "" };

export function SignUpForm({ callbackUrl }: { callbackUrl: string }) {
  const [state, action, pending] = useActionState(signUp, initial);

  if (state.ok) {
    // The same answer whether or not the address already had an account (CONTRACT.md 14).
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
      <form action={action} className="space-y-4">
        {state.error ? <Alert>{state.error}</Alert> : null}
        <Field label="Name" name="name" autoComplete="name" defaultValue={state.name} maxLength={100} />
        <Field label="Email" name="email" type="email" autoComplete="email" required defaultValue={state.email} />
        <Field label="Password" name="password" type="password" autoComplete="new-password" required minLength={8} hint="At least 8 characters." />
        <Button type="submit" disabled={pending} className="w-full">
          {pending ? "Creating account…" : "Create account"}
        </Button>
      </form>
    </Card>
  );
}
