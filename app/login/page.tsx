import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/auth/session";
import { safeCallbackUrl } from "@/auth/callback-url";
import { Page, TextLink } from "../components/ui";
import { LoginForm } from "./login-form";

export const metadata: Metadata = { title: "Sign in" };

type Search = Promise<{ callbackUrl?: string; error?: string; email?: string }>;

export default async function LoginPage({ searchParams }: { searchParams: Search }) {
  const params = await searchParams;
  const callbackUrl = safeCallbackUrl(params.callbackUrl);
  if (await currentUser()) redirect(callbackUrl);
  return (
    <Page title="Sign in" narrow>
      <LoginForm callbackUrl={callbackUrl} initialEmail={params.email ?? ""} />
      <p className="text-sm">
        No account yet? <TextLink href={`/signup?callbackUrl=${encodeURIComponent(callbackUrl)}`}>Create one</TextLink>
      </p>
    </Page>
  );
}
