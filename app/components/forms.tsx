"use client";

// Forms that post to a server action and keep what was typed when the answer is an error: the submit is
// handled here (after the browser checked required fields and formats), errors come back per field and are
// shown at the field (focus moves to the first one), an error that belongs to no field is shown in the form,
// and only a success clears the form: what was typed, never a choice (a select, a checkbox), which stays as the
// person left it, so that the next submit does nothing to something they did not pick
// (docs/rules/pages.md#choices-stay-as-picked). What happened is said next to the form (FormOutcome).
import { useState, useTransition, type FormEvent } from "react";
import { useHydrated } from "./hydrated";
import { Alert } from "./ui";

/** Clears what was typed and keeps every choice (selects, checkboxes, radio buttons) as it is now. */
export function resetTypedFields(form: HTMLFormElement) {
  const choices = Array.from(form.elements).flatMap((element) => {
    if (element instanceof HTMLSelectElement) {
      const value = element.value;
      return [() => void (element.value = value)];
    }
    if (element instanceof HTMLInputElement && (element.type === "checkbox" || element.type === "radio")) {
      const checked = element.checked;
      return [() => void (element.checked = checked)];
    }
    return [];
  });
  form.reset();
  for (const restore of choices) restore();
}

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
        if (options.resetOnSuccess !== false) resetTypedFields(form);
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
