import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentUser } from "@/auth/session";
import { safeCallbackUrl } from "@/auth/callback-url";
import { Page, TextLink } from "../components/ui";
import { SignUpForm } from "./signup-form";

export const metadata: Metadata = { title: "Create account" };

export default async function SignUpPage({ searchParams }: { searchParams: Promise<{ callbackUrl?: string }> }) {
  const callbackUrl = safeCallbackUrl((await searchParams).callbackUrl);
  if (await currentUser()) redirect(callbackUrl);
  return (
    <Page title="Create account" narrow>
      <SignUpForm callbackUrl={callbackUrl} />
      <p className="text-sm">
        Already have an account? <TextLink href={`/login?callbackUrl=${encodeURIComponent(callbackUrl)}`}>Sign in</TextLink>
      </p>
    </Page>
  );
}
