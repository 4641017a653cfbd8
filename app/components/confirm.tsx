"use client";

// Asking before anything that cuts off access or deletes (docs/rules/pages.md#confirming-before-destroying):
// the button opens a modal dialog (role="dialog", focus inside, Escape or "Cancel" closes it and changes
// nothing); the dialog's own button runs the server action, and the page's status region says what happened.
import { useEffect, useId, useRef, useState, useTransition, type ReactNode } from "react";
import { useHydrated } from "./hydrated";
import { useAnnounce, type Outcome } from "./status";
import { Button, type ButtonVariant } from "./ui";

type ConfirmDialogProps = {
  /** The button that opens the dialog. */
  label: string;
  /**
   * Its accessible name when the label alone is ambiguous ("Delete Photo Printer"): the visible label first,
   * word for word, then what it acts on (WCAG 2.5.3, docs/rules/pages.md#keyboard-and-assistive-technology).
   */
  ariaLabel?: string;
  /** The opening button's look; the dialog's own button is red. */
  buttonVariant?: ButtonVariant;
  /** The dialog's question, e.g. "Delete Photo Printer?" */
  title: string;
  /** What will happen, in words. */
  children: ReactNode;
  /** The dialog's own button, e.g. "Delete client". */
  confirmLabel: string;
  /** Runs when confirmed; resolves once done. */
  onConfirm: () => Promise<void>;
};

export function ConfirmDialog({ label, ariaLabel, buttonVariant = "secondary", title, children, confirmLabel, onConfirm }: ConfirmDialogProps) {
  const dialog = useRef<HTMLDialogElement>(null);
  // The dialog's content exists only while it is open (nothing of it lingers in the page when closed).
  const [open, setOpen] = useState(false);
  const [pending, startTransition] = useTransition();
  const titleId = useId();
  const bodyId = useId();
  const hydrated = useHydrated();
  useEffect(() => {
    if (open && !dialog.current?.open) dialog.current?.showModal();
  }, [open]);
  return (
    <>
      <Button type="button" variant={buttonVariant} aria-label={ariaLabel} aria-haspopup="dialog" disabled={pending || !hydrated} onClick={() => setOpen(true)}>
        {label}
      </Button>
      <dialog
        ref={dialog}
        aria-labelledby={titleId}
        aria-describedby={bodyId}
        onClose={() => setOpen(false)}
        className="m-auto w-[calc(100%-2rem)] max-w-md rounded-xl border border-slate-200 bg-white p-6 text-slate-900 shadow-xl backdrop:bg-slate-950/60 dark:border-slate-700 dark:bg-slate-900 dark:text-slate-100"
      >
        {open ? (
          <>
            <h2 id={titleId} className="text-lg font-semibold text-balance">
              {title}
            </h2>
            <div id={bodyId} className="mt-2 space-y-2 text-sm text-slate-700 dark:text-slate-300">
              {children}
            </div>
            <div className="mt-6 flex flex-wrap justify-end gap-3">
              {/* Focus starts on Cancel: Enter right after opening changes nothing. */}
              <Button type="button" variant="secondary" autoFocus onClick={() => dialog.current?.close()}>
                Cancel
              </Button>
              <Button
                type="button"
                variant="danger"
                disabled={pending}
                onClick={() =>
                  startTransition(async () => {
                    await onConfirm();
                    dialog.current?.close();
                  })
                }
              >
                {pending ? "Working…" : confirmLabel}
              </Button>
            </div>
          </>
        ) : null}
      </dialog>
    </>
  );
}

type ConfirmActionProps = Omit<ConfirmDialogProps, "onConfirm"> & {
  /** A server action; its outcome goes to the page's status region. */
  action: (form: FormData) => Promise<Outcome>;
  /** What the action is about (hidden form fields). */
  fields: Record<string, string | number>;
};

/** A confirmed server action whose outcome is announced by the page. */
export function ConfirmAction({ action, fields, ...dialog }: ConfirmActionProps) {
  const announce = useAnnounce();
  return (
    <ConfirmDialog
      {...dialog}
      onConfirm={async () => {
        const form = new FormData();
        for (const [name, value] of Object.entries(fields)) form.set(name, String(value));
        announce(await action(form));
      }}
    />
  );
}
