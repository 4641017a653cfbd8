"use client";

import { signIn } from "next-auth/react";
import { useActionState, useEffect, useRef } from "react";
import { Alert, Button, Card, Field } from "../components/ui";
import { signUp, type SignUpState } from "./actions";

const initial: SignUpState = { ok: false, error: null, email: "", name: "" };

export function SignUpForm({ callbackUrl }: { callbackUrl: string }) {
  const [state, action, pending] = useActionState(signUp, initial);
  // React resets the form after the action; keep the password typed for the sign-in that follows.
  const password = useRef("");

  useEffect(() => {
    if (!state.ok) return;
    // The account exists: sign in with the same credentials and go on.
    void signIn("credentials", { email: state.email, password: password.current, redirect: false }).then((result) => {
      window.location.assign(result && !result.error ? callbackUrl : `/login?email=${encodeURIComponent(state.email)}`);
    });
  }, [state, callbackUrl]);

  return (
    <Card>
      <form action={action} onSubmit={(event) => (password.current = String(new FormData(event.currentTarget).get("password") ?? ""))} className="space-y-4">
        {state.error ? <Alert>{state.error}</Alert> : null}
        <Field label="Name" name="name" autoComplete="name" defaultValue={state.name} maxLength={100} />
        <Field label="Email" name="email" type="email" autoComplete="email" required defaultValue={state.email} />
        <Field label="Password" name="password" type="password" autoComplete="new-password" required minLength={8} hint="At least 8 characters." />
        <Button type="submit" disabled={pending || state.ok} className="w-full">
          {state.ok ? "Signing in…" : "Create account"}
        </Button>
      </form>
    </Card>
  );
}
