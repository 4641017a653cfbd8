import type { Metadata } from "next";
import { Alert, Page } from "../components/ui";
import { requireUser } from "../settings/require-user";
import { RedeemPanel } from "./redeem-panel";

export const metadata: Metadata = { title: "Permission request" };

// The page a permission-request e-mail opens (/redeem?token=...). Signed-out users sign in and come back.
// The page itself only renders; the panel checks, accepts and declines through the API with the session
// cookie, from this origin (CONTRACT.md 1). Nothing is redeemed by opening the link.
export default async function RedeemPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const token = typeof params.token === "string" ? params.token : "";
  const query = new URLSearchParams(Object.entries(params).flatMap(([key, value]) => (Array.isArray(value) ? value.map((v) => [key, v]) : value === undefined ? [] : [[key, value]])));
  const user = await requireUser(`/redeem?${query.toString()}`);
  return (
    <Page title="Permission request" narrow>
      {token ? <RedeemPanel token={token} userEmail={user.email} /> : <Alert>This link has no token. Open the link from the e-mail again.</Alert>}
    </Page>
  );
}
