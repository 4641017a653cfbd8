import type { Metadata } from "next";
import { describePermissionToken } from "@/permission-requests/describe-token";
import { Alert, Page } from "../components/ui";
import { pageReader } from "../components/reader";
import { requireUser } from "../settings/require-user";
import { RedeemPanel } from "./redeem-panel";

export const metadata: Metadata = { title: "Permission request", robots: { index: false } };

// The page a permission-request e-mail opens (/redeem?token=...). Signed-out users sign in and come back.
// Opening it changes nothing (src/permission-requests/describe-token.ts reads); the panel accepts and
// declines through the API with the session cookie, from this origin
// (docs/rules/endpoints.md#api-authentication).
export default async function RedeemPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const token = typeof params.token === "string" ? params.token : "";
  const query = new URLSearchParams(Object.entries(params).flatMap(([key, value]) => (Array.isArray(value) ? value.map((v) => [key, v]) : value === undefined ? [] : [[key, value]])));
  const user = await requireUser(`/redeem?${query.toString()}`);
  if (!token) {
    return (
      <Page title="Permission request" narrow>
        <Alert>This link has no token. Open the link from the e-mail again.</Alert>
      </Page>
    );
  }
  const [view, reader] = await Promise.all([describePermissionToken({ token, viewerId: user.id }), pageReader()]);
  return (
    <Page title="Permission request" narrow>
      <RedeemPanel token={token} userEmail={user.email} initial={view} reader={reader} />
    </Page>
  );
}
