"use client";

// A page that failed while rendering (most often the database is briefly unavailable, and /api then answers
// 503 with Retry-After, docs/rules/operations.md#database-outages; or a bug): the site's layout stays, the
// person can try again, and developers get the digest that Next writes beside the error in the server's log.
import { Button, Card, DeveloperDetails, Page, TextLink } from "./components/ui";

export default function ErrorPage({ error, reset }: { error: Error & { digest?: string }; reset: () => void }) {
  const facts: [string, string][] = [["Error", "server_error"]];
  if (error.digest) facts.push(["Digest", error.digest]);
  return (
    <Page title="Something went wrong" narrow>
      <Card className="space-y-4">
        <p>Something on our side is not answering, usually the database for a moment. Nothing you did caused this. Wait a few seconds and try again.</p>
        <Button type="button" onClick={() => reset()}>
          Try again
        </Button>
      </Card>
      <DeveloperDetails facts={facts} />
      <p className="text-sm">
        <TextLink href="/">Go to the home page</TextLink>
      </p>
    </Page>
  );
}
