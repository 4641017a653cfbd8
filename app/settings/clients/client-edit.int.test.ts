// Editing a client on /settings/clients (docs/rules/pages.md#editing-a-client, docs/rules/tokens.md#editing-a-client):
// the form as the page submits it, through updateOwnClient(). An edit keeps the client_id, the secret, the
// consents and the tokens people gave the client; a bad address answers at its field and changes nothing; only
// the owner may edit (anyone else: 404, the same as for a client that does not exist).
import { describe, expect, it } from "vitest";
import { updateOwnClient } from "@/clients/update-client";
import { db } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { approvedCode, makeClient, makeUser } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";
import { submitClientEdit } from "./client-edit";

const OLD_CALLBACK = "https://old.example.test/cb";
const NEW_CALLBACK = "https://new.example.test/cb";

const form = (fields: Record<string, string>) => {
  const data = new FormData();
  for (const [name, value] of Object.entries(fields)) data.set(name, value);
  return data;
};

const row = async (clientId: string) => (await db()).client.findUniqueOrThrow({ where: { clientId } });
const stored = async (clientId: string) => {
  const { name, redirectUris, postLogoutRedirectUris, backchannelLogoutUri, logoUri, secretDigest, grantType, isPublic } = await row(clientId);
  return { name, redirectUris, postLogoutRedirectUris, backchannelLogoutUri, logoUri, secretDigest, grantType, isPublic };
};

describe("editing a client keeps what people gave it", () => {
  it("a new name and redirect URI: same client_id and secret, the consent still answers prompt=none, the tokens still work", async () => {
    const { user, client, code } = await approvedCode(OLD_CALLBACK);
    const exchanged = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "authorization_code", code, redirect_uri: OLD_CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
    });
    expect(exchanged.status).toBe(200);
    const tokens = exchanged.json as { access_token: string; refresh_token: string };
    const before = await row(client.client_id);

    const answer = await submitClientEdit(before.ownerId!, form({
      client_id: client.client_id,
      name: "Photo Printer 2",
      redirect_uris: `${NEW_CALLBACK}\n\n`,
      post_logout_redirect_uris: "https://new.example.test/bye",
      backchannel_logout_uri: "https://new.example.test/logout",
      logo_uri: "https://new.example.test/logo.png",
    }));
    expect(answer).toMatchObject({ ok: true, client: { clientId: client.client_id, name: "Photo Printer 2" } });
    expect(await stored(client.client_id)).toEqual({
      name: "Photo Printer 2",
      redirectUris: JSON.stringify([NEW_CALLBACK]),
      postLogoutRedirectUris: JSON.stringify(["https://new.example.test/bye"]),
      backchannelLogoutUri: "https://new.example.test/logout",
      logoUri: "https://new.example.test/logo.png",
      secretDigest: before.secretDigest,
      grantType: "authorization_code",
      isPublic: false,
    });

    // The access token still reads, the refresh token still refreshes with the same secret.
    expect((await call("GET", `/api/user/${user.id}/`, { token: tokens.access_token })).status).toBe(200);
    const refreshed = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id, client_secret: client.client_secret },
    });
    expect(refreshed.status).toBe(200);
    // The remembered consent still lets the client through without a page, at the new redirect URI.
    expect(await (await db()).consent.count({ where: { clientId: before.id, userId: user.id } })).toBe(1);
    const cookie = await sessionCookie(user);
    const query = (redirectUri: string) => new URLSearchParams({ response_type: "code", client_id: client.client_id, redirect_uri: redirectUri, scope: "readonly", state: "s", prompt: "none" });
    const silent = await call("GET", `/api/connect/oauth2/auth/?${query(NEW_CALLBACK)}`, { headers: { cookie } });
    expect(silent.status).toBe(302);
    const location = new URL(silent.headers.get("location")!, BASE);
    expect(`${location.origin}${location.pathname}`).toBe(NEW_CALLBACK);
    expect(location.searchParams.get("code")).toBeTruthy();
    // The removed redirect URI is refused (an error page: never a redirect to it).
    const removed = await call("GET", `/api/connect/oauth2/auth/?${query(OLD_CALLBACK)}`, { headers: { cookie } });
    expect(removed.status).toBe(400);
    expect(removed.headers.get("location")).toBeNull();
    expect((await (await db()).auditEvent.findMany({ where: { clientId: client.client_id, type: "client.updated" } })).length).toBe(1);
  }, 60_000);
});

describe("a refused edit changes nothing and says why at the field", () => {
  it.each([
    ["redirect_uris", { redirect_uris: "https://ok.example.test/cb\nhttp://evil.example/cb" }, "redirect_uris", /^Line 2 \(http:\/\/evil\.example\/cb\) must use https/],
    ["an empty redirect list", { redirect_uris: "\n" }, "redirect_uris", /^Keep at least one redirect URI/],
    ["post_logout_redirect_uris", { post_logout_redirect_uris: "https://ok.example.test/bye\nhttps://x.example.test/#frag" }, "post_logout_redirect_uris", /^Line 2 \(https:\/\/x\.example\.test\/#frag\)/],
    ["backchannel_logout_uri", { backchannel_logout_uri: "ftp://x.example.test/logout" }, "backchannel_logout_uri", /./],
    ["logo_uri", { logo_uri: "http://x.example.test/logo.png" }, "logo_uri", /^Must use https/],
    ["name", { name: "  " }, "name", /^Give the client a name/],
  ])("%s", async (_what, fields, field, message) => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", redirectUris: [OLD_CALLBACK] });
    const before = await stored(client.client_id);
    const answer = await submitClientEdit(owner.id, form({ client_id: client.client_id, name: "Renamed", redirect_uris: NEW_CALLBACK, ...fields }));
    expect(answer.ok).toBe(false);
    expect(Object.keys(answer.fieldErrors ?? {})).toEqual([field]);
    expect(answer.fieldErrors![field]).toMatch(message);
    expect(await stored(client.client_id)).toEqual(before);
  });

  it("a device client keeps having no redirect URI", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "device_code", redirectUris: [] });
    const answer = await submitClientEdit(owner.id, form({ client_id: client.client_id, name: "TV", redirect_uris: NEW_CALLBACK }));
    expect(answer.fieldErrors?.redirect_uris).toMatch(/^Leave this empty/);
    expect((await stored(client.client_id)).name).toBe("Test client");
  });
});

describe("only the owner edits", () => {
  it("another user's edit is a 404, the same as an unknown client, and changes nothing", async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", redirectUris: [OLD_CALLBACK] });
    const before = await stored(client.client_id);
    const edit = { clientId: client.client_id, name: "Taken over", redirectUris: ["https://attacker.example.test/cb"] };
    await expect(updateOwnClient({ ownerId: other.id, ...edit })).rejects.toMatchObject({ status: 404, error: "no such client" });
    await expect(updateOwnClient({ ownerId: other.id, ...edit, clientId: "no-such-client" })).rejects.toMatchObject({ status: 404, error: "no such client" });
    expect(await submitClientEdit(other.id, form({ client_id: client.client_id, name: "Taken over", redirect_uris: "https://attacker.example.test/cb" }))).toEqual({ ok: false, message: "This client no longer exists." });
    expect(await stored(client.client_id)).toEqual(before);
    expect(await (await db()).auditEvent.count({ where: { clientId: client.client_id, type: "client.updated" } })).toBe(0);
  });
});
