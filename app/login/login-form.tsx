"use client";

import Link from "next/link";
import { signIn } from "next-auth/react";
import { useRef, useState, type FormEvent } from "react";
import { useHydrated } from "../components/hydrated";
import { Alert, Button, Card, Field } from "../components/ui";
import { signInMessage } from "./messages";

// The browser checks the required fields and the e-mail's form before anything is sent (no noValidate); the
// e-mail field is focused, or the password when the e-mail is already known.
export function LoginForm({ callbackUrl, initialEmail, initialError = null }: { callbackUrl: string; initialEmail: string; initialError?: string | null }) {
  const [email, setEmail] = useState(initialEmail);
  const [error, setError] = useState<string | null>(initialError);
  const [pending, setPending] = useState(false);
  const password = useRef<HTMLInputElement>(null);
  const hydrated = useHydrated();

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPending(true);
    setError(null);
    const result = await signIn("credentials", { email, password: password.current?.value ?? "", redirect: false, callbackUrl });
    if (!result || result.error) {
      setError(signInMessage(result?.error) ?? "Sign-in failed. Try again.");
      setPending(false);
      password.current?.focus();
      return;
    }
    // A full navigation: the destination may be the authorization endpoint, which redirects off-site.
    window.location.assign(callbackUrl);
  }

  const forgot = `/forgot-password${email ? `?email=${encodeURIComponent(email)}` : ""}`;
  return (
    <Card>
      <form onSubmit={onSubmit} method="post" className="space-y-4">
        {error ? <Alert>{error}</Alert> : null}
        <Field label="Email" name="email" type="email" autoComplete="username" required autoFocus={!initialEmail} value={email} onChange={(e) => setEmail(e.target.value)} />
        <Field ref={password} label="Password" name="password" type="password" autoComplete="current-password" required autoFocus={Boolean(initialEmail)} />
        <Button type="submit" disabled={pending || !hydrated} className="w-full">
          {pending ? "Signing in…" : "Sign in"}
        </Button>
        <p className="text-center text-sm">
          <Link href={forgot} className="font-medium text-blue-700 underline underline-offset-2 hover:no-underline dark:text-blue-400">
            Forgot your password?
          </Link>
        </p>
      </form>
    </Card>
  );
}
