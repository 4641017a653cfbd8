import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/auth/session";
import { safeCallbackUrl } from "@/auth/callback-url";
import { Page, TextLink } from "../components/ui";
import { LoginForm } from "./login-form";

export const metadata: Metadata = { title: "Sign in" };

type Search = Promise<{ callbackUrl?: string; error?: string; email?: string; prompt?: string }>;

export default async function LoginPage({ searchParams }: { searchParams: Search }) {
  const params = await searchParams;
  const callbackUrl = safeCallbackUrl(params.callbackUrl);
  // prompt=login: an application asked for the password to be typed again (OpenID Connect prompt=login,
  // max_age), so a signed-in person sees the form too.
  const reauthenticate = params.prompt === "login";
  const user = await currentUser();
  if (user && !reauthenticate) redirect(callbackUrl);
  return (
    <Page title={reauthenticate && user ? "Confirm it's you" : "Sign in"} narrow>
      {reauthenticate && user ? <p className="text-sm">The application asks you to enter your password again to continue.</p> : null}
      <LoginForm callbackUrl={callbackUrl} initialEmail={params.email ?? (reauthenticate && user ? user.email : "")} />
      <p className="text-sm">
        No account yet? <TextLink href={`/signup?callbackUrl=${encodeURIComponent(callbackUrl)}`}>Create one</TextLink>
      </p>
    </Page>
  );
}
