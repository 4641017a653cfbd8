"use client";

import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { Alert, Button, Card, Field } from "../components/ui";

const MESSAGES: Record<string, string> = {
  CredentialsSignin: "That e-mail and password do not match an account.",
  rate_limited: "Too many failed attempts for this e-mail. Wait 15 minutes and try again.",
};

export function LoginForm({ callbackUrl, initialEmail }: { callbackUrl: string; initialEmail: string }) {
  const [email, setEmail] = useState(initialEmail);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError(null);
    const password = String(new FormData(event.currentTarget).get("password") ?? "");
    const result = await signIn("credentials", { email, password, redirect: false, callbackUrl });
    if (!result || result.error) {
      setError(MESSAGES[result?.error ?? ""] ?? "Sign-in failed. Try again.");
      setPending(false);
      return;
    }
    // A full navigation: the destination may be the authorization endpoint, which redirects off-site.
    window.location.assign(callbackUrl);
  }

  return (
    <Card>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {error ? <Alert>{error}</Alert> : null}
        <Field label="Email" name="email" type="email" autoComplete="email" required value={email} onChange={(e) => setEmail(e.target.value)} />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required />
        <Button type="submit" disabled={pending} className="w-full">
          {pending ? "Signing in…" : "Sign in"}
        </Button>
      </form>
    </Card>
  );
}
