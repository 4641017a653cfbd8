"use client";

import { signOut } from "next-auth/react";
import { useHydrated } from "./hydrated";

/** Ends the session in this browser only ("Sign out everywhere", on the home page, ends every session). */
export function SignOutButton() {
  const hydrated = useHydrated();
  return (
    <button type="button" disabled={!hydrated} className="py-2 font-medium hover:underline" title="Sign out of this browser" onClick={() => signOut({ callbackUrl: "/?signed_out=1" })}>
      Sign out
    </button>
  );
}
