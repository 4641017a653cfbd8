"use client";

import { signOut } from "next-auth/react";

/** Ends the session in this browser only ("Sign out everywhere", on the home page, ends every session). */
export function SignOutButton() {
  return (
    <button type="button" className="py-2 font-medium hover:underline" title="Sign out of this browser" onClick={() => signOut({ callbackUrl: "/" })}>
      Sign out
    </button>
  );
}
