"use client";

// What a page says after a confirmed action (docs/rules/pages.md#confirming-before-destroying: every
// destructive action says afterwards what happened): one live region per page (role="status"), filled by the
// actions below it. It sits above the lists whose items the actions remove, so that the message outlives the
// button that caused it; focus moves to it (the button is gone), which also brings it into view on a phone.
import { createContext, useCallback, useContext, useEffect, useRef, useState, type ReactNode } from "react";
import { alertStyles } from "./ui";

export type Outcome = { ok: boolean; message: string };

const AnnounceContext = createContext<(outcome: Outcome) => void>(() => {});

export function useAnnounce(): (outcome: Outcome) => void {
  return useContext(AnnounceContext);
}

export function StatusProvider({ children }: { children: ReactNode }) {
  const [outcome, setOutcome] = useState<(Outcome & { seq: number }) | null>(null);
  const region = useRef<HTMLDivElement>(null);
  // A new sequence number each time, so that the same message twice is announced twice.
  const announce = useCallback((next: Outcome) => setOutcome((previous) => ({ ...next, seq: (previous?.seq ?? 0) + 1 })), []);
  useEffect(() => {
    if (outcome) region.current?.focus();
  }, [outcome]);
  return (
    <AnnounceContext.Provider value={announce}>
      <div
        ref={region}
        tabIndex={-1}
        role="status"
        aria-live="polite"
        aria-atomic="true"
        className={outcome ? `scroll-mt-4 rounded-lg border px-4 py-3 text-sm outline-none focus-visible:ring-2 focus-visible:ring-blue-600 ${alertStyles[outcome.ok ? "success" : "error"]}` : "sr-only"}
      >
        {outcome ? <span key={outcome.seq}>{outcome.message}</span> : null}
      </div>
      {children}
    </AnnounceContext.Provider>
  );
}
