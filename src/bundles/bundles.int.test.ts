// The bundle and bundle_permission resources (docs/rules/permission-requests.md#bundles,
// docs/rules/permission-requests.md#bundle-permissions) and the collection envelope
// (docs/rules/endpoints.md#collections), through the real route handlers and a real database.
import { describe, expect, it } from "vitest";
import { call } from "@/testing/app";
import { makeUser, passwordSession } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";
import { db } from "@/db/client";

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const ORIGIN = "http://localhost:3000";

type Session = Awaited<ReturnType<typeof passwordSession>>;

async function newBundle(session: Session, name = "Photos") {
  const res = await call("POST", "/api/bundle/", { token: session.accessToken, body: { name } });
  expect(res.status).toBe(201);
  return res.json as { id: number; resource_uri: string; name: string };
}

async function grant(owner: Session, bundleUri: string, userAllowed: unknown) {
  return call("POST", "/api/bundle_permission/", { token: owner.accessToken, body: { bundle: bundleUri, user_allowed: userAllowed } });
}

const userRep = (user: { id: number; name: string }, email?: string) => ({
  id: user.id,
  resource_uri: `/api/user/${user.id}/`,
  name: user.name,
  ...(email ? { email } : {}),
});

describe("/api/bundle/", () => {
  it("creates a bundle: 201, Location and the representation, the owner's e-mail shown to the owner", async () => {
    const owner = await passwordSession();
    const res = await call("POST", "/api/bundle", { token: owner.accessToken, body: { name: "  Holiday  " } });
    expect(res.status).toBe(201);
    const id = res.json.id as number;
    expect(res.headers.get("location")).toBe(`/api/bundle/${id}/`);
    expect(res.json).toEqual({
      id,
      resource_uri: `/api/bundle/${id}/`,
      name: "Holiday",
      owner: userRep(owner.user, owner.user.email),
      created_at: expect.stringMatching(ISO),
    });
  });

  it("takes JSON sent as text/plain, and refuses a missing name with a 400 naming it", async () => {
    const owner = await passwordSession();
    const plain = await call("POST", "/api/bundle/", { token: owner.accessToken, headers: { "content-type": "text/plain" }, raw: '{"name":"Notes"}' });
    expect(plain.status).toBe(201);
    const missing = await call("POST", "/api/bundle/", { token: owner.accessToken, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ error: expect.stringMatching(/^name: /) });
  });

  it("needs readwrite to create and readonly to list", async () => {
    const reader = await passwordSession("readonly");
    const create = await call("POST", "/api/bundle/", { token: reader.accessToken, body: { name: "x" } });
    expect(create.status).toBe(403);
    expect(create.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    const list = await call("GET", "/api/bundle/", { token: reader.accessToken });
    expect(list.status).toBe(200);
    const anonymous = await call("GET", "/api/bundle/");
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toBe('Bearer realm="api", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api", DPoP realm="api", algs="ES256 RS256", resource_metadata="http://localhost:3000/.well-known/oauth-protected-resource/api"');
  });

  it("lists the bundles the user owns or was allowed into, newest first, in the collection envelope", async () => {
    const owner = await passwordSession();
    const friend = await passwordSession();
    const mine = await newBundle(friend, "Friend's own");
    const shared = await newBundle(owner, "Shared with friend");
    await newBundle(owner, "Not shared");
    expect((await grant(owner, shared.resource_uri, friend.user.email)).status).toBe(201);

    const res = await call("GET", "/api/bundle/", { token: friend.accessToken });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.json).toEqual({
      meta: { limit: 20, offset: 0, total_count: 2, next: null, previous: null },
      objects: [
        { id: shared.id, resource_uri: shared.resource_uri, name: "Shared with friend", owner: userRep(owner.user), created_at: expect.stringMatching(ISO) },
        { id: mine.id, resource_uri: mine.resource_uri, name: "Friend's own", owner: userRep(friend.user, friend.user.email), created_at: expect.stringMatching(ISO) },
      ],
    });
  });

  it("pages with limit and offset: next and previous are paths with the query string, or null", async () => {
    const owner = await passwordSession();
    for (const name of ["a", "b", "c", "d", "e"]) await newBundle(owner, name);
    const first = await call("GET", "/api/bundle/?limit=2", { token: owner.accessToken });
    expect(first.json.meta).toEqual({ limit: 2, offset: 0, total_count: 5, next: "/api/bundle/?limit=2&offset=2", previous: null });
    expect((first.json.objects as { name: string }[]).map((b) => b.name)).toEqual(["e", "d"]);
    const middle = await call("GET", (first.json.meta as { next: string }).next, { token: owner.accessToken });
    expect(middle.json.meta).toEqual({ limit: 2, offset: 2, total_count: 5, next: "/api/bundle/?limit=2&offset=4", previous: "/api/bundle/?limit=2&offset=0" });
    expect((middle.json.objects as { name: string }[]).map((b) => b.name)).toEqual(["c", "b"]);
    const last = await call("GET", "/api/bundle?offset=4&limit=2", { token: owner.accessToken });
    expect(last.json.meta).toEqual({ limit: 2, offset: 4, total_count: 5, next: null, previous: "/api/bundle?limit=2&offset=2" });
    expect((last.json.objects as { name: string }[]).map((b) => b.name)).toEqual(["a"]);
    const beyond = await call("GET", "/api/bundle/?offset=50", { token: owner.accessToken });
    expect(beyond.json).toEqual({ meta: { limit: 20, offset: 50, total_count: 5, next: null, previous: "/api/bundle/?limit=20&offset=30" }, objects: [] });
    const max = await call("GET", "/api/bundle/?limit=100", { token: owner.accessToken });
    expect(max.json.meta).toMatchObject({ limit: 100 });
  });

  it.each([
    ["?name=x", "filtering is not supported"],
    ["?order_by=name", "filtering is not supported"],
    ["?limit=2&owner=3", "filtering is not supported"],
    ["?limit=0", "limit: must be an integer from 1 to 100"],
    ["?limit=101", "limit: must be an integer from 1 to 100"],
    ["?limit=abc", "limit: must be an integer from 1 to 100"],
    ["?limit=", "limit: must be an integer from 1 to 100"],
    ["?limit=5&limit=6", "limit: must be an integer from 1 to 100"],
    ["?offset=-1", "offset: must be a non-negative integer"],
    ["?offset=1.5", "offset: must be a non-negative integer"],
  ])("answers %s with 400 %j", async (query, error) => {
    const owner = await passwordSession("readonly");
    const res = await call("GET", `/api/bundle/${query}`, { token: owner.accessToken });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error });
  });
});

describe("/api/bundle/<id>/", () => {
  it("is readable by the owner and an allowed user; anyone else gets 404 as for a bundle that does not exist", async () => {
    const owner = await passwordSession();
    const friend = await passwordSession();
    const stranger = await passwordSession();
    const bundle = await newBundle(owner);
    expect((await grant(owner, bundle.resource_uri, friend.user.id)).status).toBe(201);

    const byOwner = await call("GET", bundle.resource_uri, { token: owner.accessToken });
    expect(byOwner.status).toBe(200);
    expect(byOwner.json).toMatchObject({ id: bundle.id, owner: userRep(owner.user, owner.user.email) });
    const byFriend = await call("GET", `/api/bundle/${bundle.id}`, { token: friend.accessToken });
    expect(byFriend.status).toBe(200);
    expect(byFriend.json.owner).toEqual(userRep(owner.user));

    const byStranger = await call("GET", bundle.resource_uri, { token: stranger.accessToken });
    const missing = await call("GET", "/api/bundle/999999999/", { token: stranger.accessToken });
    const malformed = await call("GET", "/api/bundle/abc/", { token: stranger.accessToken });
    for (const res of [byStranger, missing, malformed]) {
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: "no such bundle" });
    }
  });

  it("is deleted by its owner only: 204, then 404; an allowed user gets 403 and a stranger 404", async () => {
    const owner = await passwordSession();
    const friend = await passwordSession();
    const stranger = await passwordSession();
    const bundle = await newBundle(owner);
    const permission = await grant(owner, bundle.resource_uri, friend.user.id);

    const byStranger = await call("DELETE", bundle.resource_uri, { token: stranger.accessToken });
    expect(byStranger.status).toBe(404);
    expect(byStranger.json).toEqual({ error: "no such bundle" });
    const byFriend = await call("DELETE", bundle.resource_uri, { token: friend.accessToken });
    expect(byFriend.status).toBe(403);
    expect(byFriend.json).toEqual({ error: "only the bundle's owner can delete it" });

    const byOwner = await call("DELETE", bundle.resource_uri, { token: owner.accessToken });
    expect(byOwner.status).toBe(204);
    expect(byOwner.text).toBe("");
    expect((await call("GET", bundle.resource_uri, { token: owner.accessToken })).status).toBe(404);
    expect((await call("DELETE", bundle.resource_uri, { token: owner.accessToken })).status).toBe(404);
    expect((await call("GET", permission.json.resource_uri as string, { token: friend.accessToken })).status).toBe(404);
  });

  it("answers other methods with 405 and Allow", async () => {
    const owner = await passwordSession();
    const bundle = await newBundle(owner);
    const res = await call("PUT", bundle.resource_uri, { token: owner.accessToken, body: { name: "x" } });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("GET, DELETE, OPTIONS, HEAD");
    expect(res.json).toEqual({ error: "method not allowed" });
  });
});

describe("/api/bundle_permission/", () => {
  it("lets the owner grant access by URI, e-mail or id: 201, Location, the record, and no mail", async () => {
    const owner = await passwordSession();
    const bundle = await newBundle(owner);
    const [byUri, byEmail, byId] = [await makeUser({ name: "By URI" }), await makeUser({ name: "By Email" }), await makeUser({ name: "By Id" })];
    const responses = [
      await grant(owner, bundle.resource_uri, `/api/user/${byUri.id}/`),
      await grant(owner, `${bundle.id}`, byEmail.email.toUpperCase()),
      await call("POST", "/api/bundle_permission/", { token: owner.accessToken, body: { bundle: bundle.id, user_allowed: String(byId.id) } }),
    ];
    for (const [res, user] of [[responses[0]!, byUri], [responses[1]!, byEmail], [responses[2]!, byId]] as const) {
      expect(res.status).toBe(201);
      const id = res.json.id as number;
      expect(res.headers.get("location")).toBe(`/api/bundle_permission/${id}/`);
      expect(res.json).toEqual({
        id,
        resource_uri: `/api/bundle_permission/${id}/`,
        bundle: { id: bundle.id, resource_uri: bundle.resource_uri, name: "Photos", owner: userRep(owner.user, owner.user.email), created_at: expect.stringMatching(ISO) },
        user_allowed: userRep(user),
        user_target: userRep(owner.user, owner.user.email),
        created_at: expect.stringMatching(ISO),
      });
    }
    const mail = await (await db()).mailMessage.count({ where: { to: { in: [byUri.email, byEmail.email, byId.email, owner.user.email] } } });
    expect(mail).toBe(0);
  });

  it("gives the allowed user access at once, and takes it away at once when revoked", async () => {
    const owner = await passwordSession();
    const friend = await passwordSession();
    const bundle = await newBundle(owner);
    expect((await call("GET", bundle.resource_uri, { token: friend.accessToken })).status).toBe(404);
    const permission = await grant(owner, bundle.resource_uri, friend.user.email);
    expect((await call("GET", bundle.resource_uri, { token: friend.accessToken })).status).toBe(200);
    const revoke = await call("DELETE", permission.json.resource_uri as string, { token: owner.accessToken });
    expect(revoke.status).toBe(204);
    expect((await call("GET", bundle.resource_uri, { token: friend.accessToken })).status).toBe(404);
    expect((await call("GET", "/api/bundle/", { token: friend.accessToken })).json.meta).toMatchObject({ total_count: 0 });
    expect((await call("DELETE", permission.json.resource_uri as string, { token: owner.accessToken })).status).toBe(404);
  });

  it("is a 409 when the user already has access, the owner included, also when two grants race", async () => {
    const owner = await passwordSession();
    const friend = await makeUser();
    const bundle = await newBundle(owner);
    const racing = await Promise.all([1, 2, 3, 4].map(() => grant(owner, bundle.resource_uri, friend.email)));
    expect(racing.map((res) => res.status).sort()).toEqual([201, 409, 409, 409]);
    for (const res of racing.filter((r) => r.status === 409)) expect(res.json).toEqual({ error: "user_allowed: already has access to this bundle" });
    const self = await grant(owner, bundle.resource_uri, owner.user.id);
    expect(self.status).toBe(409);
    expect(await (await db()).bundlePermission.count({ where: { bundleId: bundle.id } })).toBe(1);
  });

  it("refuses what only the owner may do, and references that name nothing", async () => {
    const owner = await passwordSession();
    const friend = await passwordSession();
    const stranger = await passwordSession();
    const bundle = await newBundle(owner);
    await grant(owner, bundle.resource_uri, friend.user.id);
    const cases: [Session, unknown, unknown, number, string][] = [
      [friend, bundle.resource_uri, stranger.user.id, 403, "only the bundle's owner can grant access to it"],
      [stranger, bundle.resource_uri, stranger.user.id, 400, "bundle: no such bundle"],
      [owner, "/api/bundle/999999999/", friend.user.id, 400, "bundle: no such bundle"],
      [owner, "/api/user/3/", friend.user.id, 400, "bundle: must be a bundle URI (/api/bundle/<id>/) or id"],
      [owner, undefined, friend.user.id, 400, "bundle: is required"],
      [owner, bundle.resource_uri, "nobody-here@example.test", 400, "user_allowed: no such user"],
      [owner, bundle.resource_uri, "/api/bundle/1/", 400, "user_allowed: must be a user URI (/api/user/<id>/), e-mail or id"],
      [owner, bundle.resource_uri, true, 400, "user_allowed: must be a user URI (/api/user/<id>/), e-mail or id"],
    ];
    for (const [who, ref, allowed, status, error] of cases) {
      const res = await call("POST", "/api/bundle_permission/", { token: who.accessToken, body: { bundle: ref, user_allowed: allowed } });
      expect({ status: res.status, body: res.json }).toEqual({ status, body: { error } });
    }
  });

  it("lists and shows permissions to either party only; either party may revoke, anyone else gets 404", async () => {
    const owner = await passwordSession();
    const friend = await passwordSession();
    const stranger = await passwordSession();
    const bundle = await newBundle(owner);
    const permission = (await grant(owner, bundle.resource_uri, friend.user.id)).json;
    const uri = permission.resource_uri as string;

    for (const who of [owner, friend]) {
      const list = await call("GET", "/api/bundle_permission/", { token: who.accessToken });
      expect(list.status).toBe(200);
      expect(list.json.meta).toEqual({ limit: 20, offset: 0, total_count: 1, next: null, previous: null });
      expect((list.json.objects as { id: number }[])[0]!.id).toBe(permission.id);
      const detail = await call("GET", uri, { token: who.accessToken });
      expect(detail.status).toBe(200);
      expect(detail.json.user_allowed).toEqual(userRep(friend.user, who === friend ? friend.user.email : undefined));
    }
    const strangerList = await call("GET", "/api/bundle_permission/", { token: stranger.accessToken });
    expect(strangerList.json).toEqual({ meta: { limit: 20, offset: 0, total_count: 0, next: null, previous: null }, objects: [] });
    expect((await call("GET", uri, { token: stranger.accessToken })).status).toBe(404);
    expect((await call("DELETE", uri, { token: stranger.accessToken })).status).toBe(404);
    expect((await call("GET", "/api/bundle_permission/?bundle=1", { token: owner.accessToken })).json).toEqual({ error: "filtering is not supported" });

    const gaveUp = await call("DELETE", uri, { token: friend.accessToken });
    expect(gaveUp.status).toBe(204);
    expect((await call("GET", uri, { token: owner.accessToken })).status).toBe(404);
  });

  it("accepts the service's own pages with a session cookie, and refuses a cookie write from another origin", async () => {
    const owner = await makeUser();
    const friend = await makeUser();
    const cookie = await sessionCookie(owner);
    const created = await call("POST", "/api/bundle/", { headers: { cookie, origin: ORIGIN }, body: { name: "From the page" } });
    expect(created.status).toBe(201);
    const granted = await call("POST", "/api/bundle_permission/", { headers: { cookie, origin: ORIGIN }, body: { bundle: created.json.resource_uri, user_allowed: friend.email } });
    expect(granted.status).toBe(201);
    const crossSite = await call("DELETE", granted.json.resource_uri as string, { headers: { cookie, origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
    expect(await (await db()).bundlePermission.count({ where: { id: granted.json.id as number } })).toBe(1);
  });
});
