import type { Metadata } from "next";
import { Card, DeveloperDetails, Page, TextLink } from "./components/ui";

export const metadata: Metadata = { title: "Page not found", robots: { index: false } };

export default function NotFound() {
  return (
    <Page title="Page not found" narrow>
      <Card>
        <p>There is no page at this address. Check the link you followed, or start again from the home page.</p>
      </Card>
      <DeveloperDetails facts={[["Status", "404"]]} />
      <p className="text-sm">
        <TextLink href="/">Go to the home page</TextLink>
      </p>
    </Page>
  );
}
