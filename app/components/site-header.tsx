import Link from "next/link";
import { currentUser } from "@/auth/session";
import { SignOutButton } from "./sign-out-button";

export async function SiteHeader() {
  const user = await currentUser();
  return (
    <header className="border-b border-slate-200 bg-white dark:border-slate-800 dark:bg-slate-900">
      <nav aria-label="Main" className="mx-auto flex max-w-3xl flex-wrap items-center gap-x-4 gap-y-2 px-4 py-3 text-sm">
        <Link href="/" className="font-semibold">
          Bundle permissions
        </Link>
        {user ? (
          <>
            <Link href="/settings/apps" className="hover:underline">Apps</Link>
            <Link href="/settings/clients" className="hover:underline">Clients</Link>
            <Link href="/settings/sharing" className="hover:underline">Sharing</Link>
            <Link href="/settings/security" className="hover:underline">Security</Link>
            <span className="ml-auto text-slate-600 dark:text-slate-400">{user.email}</span>
            <SignOutButton />
          </>
        ) : (
          <span className="ml-auto flex gap-4">
            <Link href="/login" className="hover:underline">Sign in</Link>
            <Link href="/signup" className="hover:underline">Create account</Link>
          </span>
        )}
      </nav>
    </header>
  );
}
