import type { Metadata } from "next";
import { notFound } from "next/navigation";
import { Card, Page, TextLink } from "../../../components/ui";
import { requireUser } from "../../../settings/require-user";
import { AskOwnerForm } from "../../../settings/sharing/sharing-forms";
import { bundleIdOf } from "../bundle-id";

// Where a bundle's ask-for-access link leads (docs/rules/pages.md#bundle-page): the request form of the
// sharing page, filled in with the bundle and the owner's e-mail that the link carries. The page looks nothing
// up: it shows what the link holds, and the request's own rules decide
// (docs/rules/permission-requests.md#creating-a-request: one answer for every refusal that depends on who owns
// the bundle), so that it tells nobody whether the bundle exists or whose it is.
export const metadata: Metadata = { title: "Ask for access" };

export default async function AskPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ id: raw }, query] = await Promise.all([params, searchParams]);
  const owner = typeof query.owner === "string" ? query.owner.slice(0, 320) : undefined;
  const id = bundleIdOf(raw);
  if (id === null) notFound();
  const user = await requireUser(`/bundles/${id}/ask${owner ? `?${new URLSearchParams({ owner })}` : ""}`);
  return (
    <Page title="Ask for access" narrow lead={<p>Ask the owner of bundle {id} to let you, or someone else, read it. The owner gets an e-mail with a link to accept or decline.</p>}>
      <Card>
        <AskOwnerForm ownEmail={user.email} owner={owner} bundle={String(id)} />
      </Card>
      <p className="text-sm">
        Next: <TextLink href="/settings/sharing#requests-you-sent">see what became of your requests on the Sharing page</TextLink>.
      </p>
    </Page>
  );
}
