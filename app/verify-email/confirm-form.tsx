"use client";

import { useActionState } from "react";
import { Alert, Button, TextLink } from "../components/ui";
import { confirmAddress } from "./actions";

export function ConfirmForm({ token, email }: { token: string; email: string }) {
  const [result, action, pending] = useActionState(confirmAddress, null);
  if (result?.state === "confirmed") {
    return (
      <Alert kind="success">
        <p className="font-semibold">Address confirmed</p>
        <p className="mt-1">
          {result.email} is confirmed. <TextLink href="/">Continue</TextLink>
        </p>
      </Alert>
    );
  }
  return (
    <form action={action} className="space-y-3">
      {result ? <Alert>This link can no longer be used ({result.state}). Sign in and ask for a new one on the home page.</Alert> : null}
      <input type="hidden" name="token" value={token} />
      <Button type="submit" disabled={pending}>
        Confirm {email}
      </Button>
    </form>
  );
}
