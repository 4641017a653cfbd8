import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/auth/session";
import { safeCallbackUrl } from "@/auth/callback-url";
import { signInPurpose, type SignInPurpose } from "@/consent/sign-in-purpose";
import { Page, TextLink } from "../components/ui";
import { LoginForm } from "./login-form";
import { signInMessage } from "./messages";

export const metadata: Metadata = { title: "Sign in" };

type Search = Promise<{ callbackUrl?: string; error?: string; email?: string; prompt?: string }>;

/** "to continue to Photo Printer" (docs/rules/pages.md#sign-in). */
function purposeLine(purpose: SignInPurpose | null): string | null {
  if (!purpose) return null;
  if (purpose.kind === "app") return `to continue to ${purpose.appName}`;
  return purpose.appName ? `to connect ${purpose.appName} on your device` : "to connect a device";
}

export default async function LoginPage({ searchParams }: { searchParams: Search }) {
  const params = await searchParams;
  const callbackUrl = safeCallbackUrl(params.callbackUrl);
  // prompt=login: an application asked for the password to be typed again (OpenID Connect prompt=login,
  // max_age), so a signed-in person sees the form too.
  const reauthenticate = params.prompt === "login";
  const user = await currentUser();
  if (user && !reauthenticate) redirect(callbackUrl);
  const purpose = purposeLine(await signInPurpose(callbackUrl));
  const confirming = reauthenticate && user;
  const email = typeof params.email === "string" ? params.email.slice(0, 254) : confirming ? user.email : "";
  return (
    <Page
      title={confirming ? "Confirm it's you" : "Sign in"}
      narrow
      lead={
        confirming ? (
          <p>The application asks you to enter your password again{purpose ? `, ${purpose}` : ""}.</p>
        ) : purpose ? (
          <p>
            Sign in <strong className="text-slate-900 dark:text-slate-100">{purpose}</strong>.
          </p>
        ) : null
      }
    >
      {/* next-auth's error redirect (a sign-in posted without the page's script) names the reason. */}
      <LoginForm callbackUrl={callbackUrl} initialEmail={email} initialError={signInMessage(typeof params.error === "string" ? params.error : null)} />
      <p className="text-sm">
        No account yet? <TextLink href={`/signup?callbackUrl=${encodeURIComponent(callbackUrl)}`}>Create one</TextLink>
      </p>
    </Page>
  );
}
