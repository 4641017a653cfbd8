// The consent decision, POST /consent/decide (docs/rules/tokens.md#consent): each refusal of the form is its
// own error page (what went wrong, for the person; the OAuth error code, for the developer) and issues and
// remembers nothing; an approval is remembered only for a confidential third-party client, and recorded in the
// audit log either way (docs/rules/operations.md#audit-log), saying whether it was remembered.
import { describe, expect, it } from "vitest";
import { deleteOwnClient } from "@/clients/manage-clients";
import { consentCsrfToken } from "@/oauth/authorization-request";
import { s256 } from "@/oauth/pkce";
import { db } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const REDIRECT = "https://client.example.test/callback";
const VERIFIER = "v".repeat(43);

async function scene(options: { isPublic?: boolean; scope?: string } = {}) {
  const owner = await makeUser();
  const user = await makeUser();
  const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", isPublic: options.isPublic });
  const cookie = await sessionCookie(user);
  const query = new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: REDIRECT, scope: options.scope ?? "readonly", state: "s" });
  if (options.isPublic) {
    query.set("code_challenge", s256(VERIFIER));
    query.set("code_challenge_method", "S256");
  }
  const asked = await call("GET", `/api/connect/oauth2/auth/?${query}`, { headers: { cookie } });
  const sealed = new URL(asked.headers.get("location")!, BASE).searchParams.get("request")!;
  return { owner, user, client, cookie, sealed, csrf: consentCsrfToken(user.id, sealed) };
}

const post = (cookie: string, raw: string, origin: string | null = BASE) =>
  call("POST", "/consent/decide", { headers: { "content-type": "application/x-www-form-urlencoded", cookie, ...(origin ? { origin } : {}) }, raw });

/** The page's title, its message, and the facts it gives developers. */
function errorPage(res: { status: number; headers: Headers; text: string }) {
  return {
    status: res.status,
    location: res.headers.get("location"),
    title: /<h1>(.*?)<\/h1>/.exec(res.text)?.[1],
    message: /<div class="card"><p>(.*?)<\/p>/.exec(res.text)?.[1],
    facts: [...res.text.matchAll(/<dt>(.*?)<\/dt><dd>(.*?)<\/dd>/g)].map(([, label, value]) => [label, value]),
  };
}

const refused = (message: string) => ({ status: 403, location: null, title: "Request refused", message, facts: [["Error", "invalid_request"]] });
const NOT_OURS = "This form can only be sent from this site&#39;s own consent page.";
const NOT_VALID = "The consent form was not valid for your session. Go back to the application and start again.";

describe("a consent form that cannot be accepted", () => {
  it("from another site, or with no Origin at all: refused before anything is read", async () => {
    const s = await scene();
    const form = new URLSearchParams({ request: s.sealed, csrf: s.csrf, decision: "approve" }).toString();
    expect(errorPage(await post(s.cookie, form, "https://evil.example"))).toEqual(refused(NOT_OURS));
    expect(errorPage(await post(s.cookie, form, null))).toEqual(refused(NOT_OURS));
    expect(await (await db()).consent.count({ where: { userId: s.user.id } })).toBe(0);
  });

  it("without its CSRF token or request, with a wrong token, or not a valid form: refused as not valid for the session", async () => {
    const s = await scene();
    const forms: Record<string, string>[] = [
      { request: s.sealed, decision: "approve" },
      { csrf: s.csrf, decision: "approve" },
      { request: s.sealed, csrf: consentCsrfToken(s.user.id + 1, s.sealed), decision: "approve" },
      { request: s.sealed, csrf: "", decision: "approve" },
    ];
    for (const form of forms) {
      expect(errorPage(await post(s.cookie, new URLSearchParams(form).toString()))).toEqual(refused(NOT_VALID));
    }
    // A repeated field makes the form unreadable (RFC 6749 3.1): the same refusal, never a server error.
    const repeated = `request=${s.sealed}&request=${s.sealed}&csrf=${s.csrf}&decision=approve`;
    expect(errorPage(await post(s.cookie, repeated))).toEqual(refused(NOT_VALID));
    expect(await (await db()).consent.count({ where: { userId: s.user.id } })).toBe(0);
  });

  it("sealed for another person: the request has expired for this one", async () => {
    const s = await scene();
    const intruder = await makeUser();
    const form = new URLSearchParams({ request: s.sealed, csrf: consentCsrfToken(intruder.id, s.sealed), decision: "approve" }).toString();
    expect(errorPage(await post(await sessionCookie(intruder), form))).toEqual({
      status: 400,
      location: null,
      title: "Request expired",
      message: "This authorization request has expired. Go back to the application and start again.",
      facts: [["Error", "invalid_request"]],
    });
  });

  it("for an application deleted since: unknown application, invalid_client, with its client_id", async () => {
    const s = await scene();
    await deleteOwnClient({ ownerId: s.owner.id, clientId: s.client.client_id });
    const form = new URLSearchParams({ request: s.sealed, csrf: s.csrf, decision: "approve" }).toString();
    expect(errorPage(await post(s.cookie, form))).toEqual({
      status: 400,
      location: null,
      title: "Unknown application",
      message: "This application is no longer registered.",
      facts: [
        ["Error", "invalid_client"],
        ["client_id", s.client.client_id],
      ],
    });
  });
});

describe("an approval", () => {
  async function approve(s: Awaited<ReturnType<typeof scene>>) {
    const res = await post(s.cookie, new URLSearchParams({ request: s.sealed, csrf: s.csrf, decision: "approve" }).toString());
    expect(res.status).toBe(303);
    expect(new URL(res.headers.get("location")!).searchParams.get("code")).toMatch(/^[\w-]{43}$/);
  }

  async function granted(userId: number) {
    const rows = await (await db()).auditEvent.findMany({ where: { type: "consent.granted", userId } });
    return rows.map((row) => ({ clientId: row.clientId, detail: JSON.parse(row.detail!) as unknown }));
  }

  it("is remembered for a confidential client, and the audit log says so", async () => {
    const s = await scene({ scope: "readwrite readonly" });
    await approve(s);
    expect(await (await db()).consent.findMany({ where: { userId: s.user.id }, select: { scopes: true } })).toEqual([{ scopes: "readonly readwrite" }]);
    expect(await granted(s.user.id)).toEqual([{ clientId: s.client.client_id, detail: { scope: "readonly readwrite", remembered: true } }]);
  });

  it("is not remembered for a public client (anyone can claim its client_id), and the audit log says so", async () => {
    const s = await scene({ isPublic: true });
    await approve(s);
    expect(await (await db()).consent.count({ where: { userId: s.user.id } })).toBe(0);
    expect(await granted(s.user.id)).toEqual([{ clientId: s.client.client_id, detail: { scope: "readonly", remembered: false } }]);
  });
});
