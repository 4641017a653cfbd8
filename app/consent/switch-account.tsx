"use client";

import { signOut } from "next-auth/react";
import { useHydrated } from "../components/hydrated";

/** "Not you? Switch account": signs out of this browser, then signs in again and goes on with the same request. */
export function SwitchAccount({ restartUrl }: { restartUrl: string }) {
  const hydrated = useHydrated();
  return (
    <button
      type="button"
      disabled={!hydrated}
      className="font-medium text-blue-700 underline underline-offset-2 hover:no-underline dark:text-blue-400"
      onClick={() => signOut({ callbackUrl: `/login?callbackUrl=${encodeURIComponent(restartUrl)}` })}
    >
      Switch account
    </button>
  );
}
