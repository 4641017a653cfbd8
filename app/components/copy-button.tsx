"use client";

// Copies a value (a client_id, a secret shown once) to the clipboard, and says so.
import { useState } from "react";
import { useHydrated } from "./hydrated";

export function CopyButton({ value, label }: { value: string; label: string }) {
  const [state, setState] = useState<"idle" | "copied" | "failed">("idle");
  const hydrated = useHydrated();
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setState("copied");
    } catch {
      setState("failed");
    }
  }
  return (
    <span className="inline-flex items-center gap-2">
      <button
        type="button"
        onClick={copy}
        disabled={!hydrated}
        aria-label={label}
        className="rounded-md border border-slate-300 bg-white px-2 py-1 font-sans text-xs font-semibold text-slate-900 hover:bg-slate-100 focus-visible:outline-2 focus-visible:outline-offset-2 focus-visible:outline-blue-700 dark:border-slate-600 dark:bg-slate-900 dark:text-slate-100 dark:hover:bg-slate-800"
      >
        Copy
      </button>
      <span aria-live="polite" className="font-sans text-xs">
        {state === "copied" ? "Copied" : state === "failed" ? "Select the text and copy it" : ""}
      </span>
    </span>
  );
}
