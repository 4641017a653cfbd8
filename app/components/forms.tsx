"use client";

// Forms that post to a server action and keep what was typed when the answer is an error: the submit is
// handled here (after the browser checked required fields and formats), errors come back per field and are
// shown at the field (focus moves to the first one), an error that belongs to no field is shown in the form,
// and only a success clears the form. What happened is said next to the form (FormOutcome).
import { useState, useTransition, type FormEvent } from "react";
import { useHydrated } from "./hydrated";
import { Alert } from "./ui";

/** What a form's server action answers. */
export type FormResult = { ok: boolean; message: string; fieldErrors?: Record<string, string> };

export function useServerForm<R extends FormResult>(action: (form: FormData) => Promise<R>, options: { resetOnSuccess?: boolean } = {}) {
  const [result, setResult] = useState<R | null>(null);
  const [pending, startTransition] = useTransition();
  const hydrated = useHydrated();
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = event.currentTarget;
    const data = new FormData(form);
    startTransition(async () => {
      const answer = await action(data);
      setResult(answer);
      if (answer.ok) {
        if (options.resetOnSuccess !== false) form.reset();
        return;
      }
      const first = Object.keys(answer.fieldErrors ?? {})[0];
      const field = first ? form.elements.namedItem(first) : null;
      if (field instanceof HTMLElement) requestAnimationFrame(() => field.focus());
    });
  }
  const failed = result && !result.ok ? result : null;
  return {
    result,
    pending,
    /** Submitting is possible: React has taken over the page and nothing is being sent. */
    ready: hydrated && !pending,
    onSubmit,
    fieldError: (name: string) => failed?.fieldErrors?.[name] ?? null,
    /** An error that belongs to no field. */
    formError: failed && Object.keys(failed.fieldErrors ?? {}).length === 0 ? failed.message : null,
  };
}

/** The form's answer: an error that belongs to no field, or what a success did. */
export function FormOutcome({ result, formError }: { result: FormResult | null; formError: string | null }) {
  if (formError) return <Alert>{formError}</Alert>;
  if (result?.ok) return <Alert kind="success">{result.message}</Alert>;
  return null;
}
