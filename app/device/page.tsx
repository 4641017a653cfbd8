import type { Metadata } from "next";
import { deviceFormCsrfToken } from "@/device/verify-user-code";
import { formatUserCode, normalizeUserCode } from "@/device/user-code";
import { Alert, Button, Card, Field, Page, TextLink } from "../components/ui";
import { requireUser } from "../settings/require-user";

export const metadata: Metadata = { title: "Connect a device" };

type Search = Promise<{ user_code?: string; error?: string; done?: string }>;

const ERRORS: Record<string, string> = {
  invalid: "That code is not valid, or it has expired or was already used. Check the code on your device and try again.",
  expired: "This code expired or was already used before you decided. Start again on your device.",
};

// The device flow's verification page (RFC 8628 3.3, docs/rules/pages.md#device-page): a signed-in person
// types the code their device shows (or arrives with it filled in from verification_uri_complete), then sees
// the consent page.
export default async function DevicePage({ searchParams }: { searchParams: Search }) {
  const params = await searchParams;
  const typed = typeof params.user_code === "string" ? params.user_code.slice(0, 32) : "";
  const user = await requireUser(typed ? `/device?user_code=${encodeURIComponent(typed)}` : "/device");

  if (params.done === "approved") {
    return (
      <Page title="Device connected" narrow>
        <Alert kind="success">You approved the device. Go back to it: it may continue now.</Alert>
        <p className="text-sm">
          You can disconnect it at any time under <TextLink href="/settings/apps">Apps</TextLink>.
        </p>
        <p className="text-sm">
          Next: <TextLink href="/device">connect another device</TextLink>.
        </p>
      </Page>
    );
  }
  if (params.done === "denied") {
    return (
      <Page title="Access denied" narrow>
        <Alert kind="info">You denied access. The device will not get access to your account.</Alert>
        <p className="text-sm">
          Next: if that was a mistake, start again on the device and <TextLink href="/device">type its new code here</TextLink>; the apps that
          can use your account are under <TextLink href="/settings/apps">Apps</TextLink>.
        </p>
      </Page>
    );
  }

  const normalized = normalizeUserCode(typed);
  const error = params.error ? (ERRORS[params.error] ?? ERRORS.invalid) : null;
  return (
    <Page title="Connect a device" narrow>
      <Card>
        <form method="post" action="/device/verify" className="space-y-4">
          {error ? <Alert>{error}</Alert> : null}
          <p className="text-sm">
            Type the code that your device or command-line tool shows. You are signed in as <strong>{user.email}</strong>.
          </p>
          <input type="hidden" name="csrf" value={deviceFormCsrfToken(user.id)} />
          <Field
            label="Code"
            name="user_code"
            required
            autoFocus
            defaultValue={normalized ? formatUserCode(normalized) : typed}
            placeholder="XXXX-XXXX"
            autoComplete="off"
            autoCapitalize="characters"
            spellCheck={false}
            maxLength={32}
            className="block w-full rounded-lg border border-slate-300 bg-white px-3 py-2 font-mono text-lg tracking-widest uppercase shadow-sm focus:border-blue-600 focus:outline-none focus:ring-2 focus:ring-blue-600/30 dark:border-slate-700 dark:bg-slate-950"
          />
          <Button type="submit" className="w-full">
            Continue
          </Button>
        </form>
      </Card>
    </Page>
  );
}
