"use client";
// The friendly page for a page that could not be rendered (issue 10 point 4): most often the database is
// briefly unavailable (then /api answers 503 with Retry-After). Production hides the error's details; the
// digest lets an operator find the logged error.
import { Alert, Button, Page } from "./components/ui";

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  return (
    <Page title="This page is unavailable right now" narrow>
      <Alert>
        Something on our side is not answering, usually the database for a moment. Nothing you did caused this. Wait a few seconds and try
        again.
      </Alert>
      <Button type="button" onClick={() => reset()}>
        Try again
      </Button>
      {error.digest ? <p className="text-xs text-slate-500">Reference: {error.digest}</p> : null}
    </Page>
  );
}
