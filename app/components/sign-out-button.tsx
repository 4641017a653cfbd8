"use client";

import { signOut } from "next-auth/react";

export function SignOutButton() {
  return (
    <button type="button" className="hover:underline" onClick={() => signOut({ callbackUrl: "/" })}>
      Sign out
    </button>
  );
}
