"use client";

import { useActionState } from "react";
import { Alert, Button } from "../components/ui";
import { resendConfirmation } from "./actions";

const ANSWERS = {
  sent: "We sent a new link. It works once, for 24 hours.",
  already_confirmed: "Your address is already confirmed.",
  limited: "We have sent several links today already. Look for them (and in your spam folder), or try again tomorrow.",
} as const;

/**
 * Shown to a signed-in user whose address is not confirmed yet (docs/rules/accounts.md#unconfirmed-accounts).
 */
export function ConfirmNotice({ email }: { email: string }) {
  const [result, action, pending] = useActionState(resendConfirmation, null);
  return (
    <Alert kind="info">
      <p className="font-semibold">Confirm your e-mail address</p>
      <p className="mt-1">
        We sent a link to {email}. Until you open it and confirm, you cannot register clients or let apps use your account, and
        nobody can send you permission requests.
      </p>
      {result ? <p className="mt-1">{ANSWERS[result.state]}</p> : null}
      <form action={action} className="mt-2">
        <Button type="submit" variant="secondary" disabled={pending}>
          Send the link again
        </Button>
      </form>
    </Alert>
  );
}
