// bundle_permission_request (docs/rules/specification.md#permission-requests,
// docs/rules/permission-requests.md) through the real route handlers and a real database: create and its
// rules, the outbox mail, list and detail, check, redeem and delete by every party. Concurrent redeems and
// deletes are in races.int.test.ts, where the requests are shown to overlap. Every scene has its own users and
// bundle, since the database is shared with test files running at once.
import { afterEach, describe, expect, it } from "vitest";
import { formatDateTime } from "@/format/date-time";
import { advanceClock, resetClock } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { listMail } from "@/email/list-mail";
import { digest } from "@/secrets";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const LIST = "/api/bundle_permission_request/";
const APP = "http://localhost:3000";
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
const WEEK = 604800;
const CANNOT_GRANT = { error: "user_target: cannot grant access to this bundle" };

afterEach(() => resetClock());

type Session = Awaited<ReturnType<typeof passwordSession>>;
type User = Session["user"];
type Scene = Awaited<ReturnType<typeof scene>>;

/** A bundle owner (the target), a requester, the user to be allowed in and a stranger, each with a token from
 * their own third-party password client. */
async function scene() {
  const [owner, requester, allowed, stranger] = await Promise.all([passwordSession(), passwordSession(), passwordSession(), passwordSession()]);
  const bundle = await createBundle({ ownerId: owner.user.id, name: "Holiday photos" });
  return { owner, requester, allowed, stranger, bundle };
}

function ask(s: Scene, extra: Record<string, unknown> = {}, token = s.requester.accessToken) {
  return call("POST", LIST, {
    token,
    body: { bundle: s.bundle.resource_uri, user_allowed: `/api/user/${s.allowed.user.id}/`, user_target: `/api/user/${s.owner.user.id}/`, ...extra },
  });
}

async function created(s: Scene, extra: Record<string, unknown> = {}) {
  const res = await ask(s, extra);
  expect(res.status, res.text).toBe(201);
  return res.json as Record<string, unknown> & { id: number; resource_uri: string };
}

/** The token in the newest mail to `email`, read from the outbox as the e-mail's reader would see it. */
async function tokenFromMail(email: string): Promise<{ token: string; link: URL }> {
  const [mail] = await listMail({ to: email });
  const href = /https?:\/\/\S*[?&]token=[A-Za-z0-9_-]+\S*/.exec(mail!.text)?.[0];
  expect(href, mail!.text).toBeDefined();
  const link = new URL(href!);
  return { token: link.searchParams.get("token")!, link };
}

/** A token from a client the CLI marked first-party, for `user`. */
async function firstPartyToken(user: User): Promise<string> {
  const client = await makeClient({ ownerId: user.id, firstParty: true });
  const res = await call("POST", "/api/connect/oauth2/token/", {
    body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: user.email, password: user.password, scope: "readonly readwrite" },
  });
  return res.json.access_token as string;
}

const page = async (user: User) => ({ cookie: await sessionCookie(user), origin: APP });
const tokenPath = (token: string) => `${LIST}${token}/`;
const redeemAsPage = async (user: User, token: string) => call("PUT", tokenPath(token), { headers: await page(user) });

const userRep = (user: User, viewer?: User) => ({
  id: user.id,
  resource_uri: `/api/user/${user.id}/`,
  name: user.name,
  ...(viewer?.id === user.id ? { email: user.email } : {}),
});

describe("create", () => {
  it("answers 201 with Location and the record, populated, with the defaults for ttl and redeem_url", async () => {
    const s = await scene();
    const res = await ask(s);
    expect(res.status).toBe(201);
    const body = res.json;
    expect(res.headers.get("location")).toBe(`${LIST}${body.id}/`);
    expect(Object.keys(body)).toEqual(["id", "resource_uri", "bundle", "user_allowed", "user_target", "requested_by", "redeem_url", "ttl", "status", "created_at", "expires_at", "redeemed_at"]);
    expect(body).toEqual({
      id: expect.any(Number),
      resource_uri: `${LIST}${body.id}/`,
      bundle: { id: s.bundle.id, resource_uri: s.bundle.resource_uri, name: "Holiday photos", owner: userRep(s.owner.user), created_at: s.bundle.created_at },
      user_allowed: userRep(s.allowed.user),
      user_target: userRep(s.owner.user),
      requested_by: userRep(s.requester.user, s.requester.user),
      redeem_url: `${APP}/redeem`,
      ttl: WEEK,
      status: "pending",
      created_at: expect.stringMatching(ISO),
      expires_at: expect.stringMatching(ISO),
      redeemed_at: null,
    });
    expect(Date.parse(body.expires_at as string) - Date.parse(body.created_at as string)).toBe(WEEK * 1000);
  });

  it("takes references as URI (path or absolute on APP_URL), e-mail or id", async () => {
    const forms = (s: Scene) => [
      { bundle: s.bundle.resource_uri, user_allowed: `/api/user/${s.allowed.user.id}`, user_target: `${APP}/api/user/${s.owner.user.id}/` },
      { bundle: s.bundle.id, user_allowed: s.allowed.user.email.toUpperCase(), user_target: s.owner.user.email },
      { bundle: String(s.bundle.id), user_allowed: s.allowed.user.id, user_target: String(s.owner.user.id) },
      { bundle: `${APP}${s.bundle.resource_uri}`, user_allowed: ` ${s.allowed.user.id} `, user_target: s.owner.user.id },
    ];
    for (let i = 0; i < 4; i++) {
      const s = await scene();
      const res = await ask(s, forms(s)[i]);
      expect(res.status, JSON.stringify(forms(s)[i])).toBe(201);
      expect(res.json).toMatchObject({ bundle: { id: s.bundle.id }, user_allowed: { id: s.allowed.user.id }, user_target: { id: s.owner.user.id } });
    }
  });

  it("lets a user ask for themself, and the owner ask on someone's behalf", async () => {
    const s = await scene();
    const self = await ask(s, { user_allowed: s.requester.user.email });
    expect(self.status).toBe(201);
    expect(self.json.user_allowed).toEqual(userRep(s.requester.user, s.requester.user));
    const byOwner = await ask(s, {}, s.owner.accessToken);
    expect(byOwner.status).toBe(201);
    expect(byOwner.json.requested_by).toEqual(userRep(s.owner.user, s.owner.user));
  });

  it("accepts the service's own pages with a session cookie and JSON sent as text/plain", async () => {
    const s = await scene();
    const res = await call("POST", LIST, {
      headers: { ...(await page(s.requester.user)), "content-type": "text/plain;charset=UTF-8" },
      raw: JSON.stringify({ bundle: s.bundle.id, user_allowed: s.allowed.user.id, user_target: s.owner.user.id }),
    });
    expect(res.status).toBe(201);
  });

  it.each([
    [null, WEEK],
    ["", WEEK],
    ["  ", WEEK],
    [60, 60],
    [2592000, 2592000],
    ["3600", 3600],
  ])("takes ttl %j as %d seconds", async (ttl, seconds) => {
    const s = await scene();
    const body = await created(s, { ttl });
    expect(body.ttl).toBe(seconds);
    expect(Date.parse(body.expires_at as string) - Date.parse(body.created_at as string)).toBe(seconds * 1000);
  });

  it.each([59, 2592001, 0, -60, 3600.5, "1h", "60.0", true, [3600], { s: 60 }])("refuses ttl %j with a 400 naming the range", async (ttl) => {
    const s = await scene();
    const res = await ask(s, { ttl });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: "ttl: must be an integer from 60 to 2592000" });
  });

  it.each([
    [null, `${APP}/redeem`],
    ["", `${APP}/redeem`],
    ["/redeem", `${APP}/redeem`],
    [`${APP}/redeem`, `${APP}/redeem`],
    ["/redeem?lang=fr&from=mail", `${APP}/redeem?lang=fr&from=mail`],
    ["redeem?lang=fr", `${APP}/redeem?lang=fr`],
    ["/redeem?token=planted", `${APP}/redeem`],
  ])("takes redeem_url %j as %s, and the mailed link adds the token to it", async (redeemUrl, expected) => {
    const s = await scene();
    const body = await created(s, { redeem_url: redeemUrl });
    expect(body.redeem_url).toBe(expected);
    const { token, link } = await tokenFromMail(s.owner.user.email);
    const withoutToken = new URL(link);
    withoutToken.searchParams.delete("token");
    expect(withoutToken.href).toBe(expected);
    expect(link.searchParams.getAll("token")).toEqual([token]);
  });

  it.each([
    "https://evil.example/redeem",
    "//evil.example/redeem",
    "http://localhost:3001/redeem",
    "https://localhost:3000/redeem",
    "http://user:pw@localhost:3000/redeem",
    "/settings/clients",
    "/redeem/",
    "/Redeem",
    "/api/bundle_permission_request/",
    "/redeem#token=x",
    "javascript:alert(1)",
    "/\\evil.example/redeem",
    42,
  ])("refuses redeem_url %j with a 400", async (redeemUrl) => {
    const s = await scene();
    const res = await ask(s, { redeem_url: redeemUrl });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error: `redeem_url: must be the /redeem page of ${APP}, e.g. /redeem` });
  });

  it("answers an unknown target and a target who is not the owner with the same 400, and an unknown bundle with its own", async () => {
    const s = await scene();
    const notOwner = await ask(s, { user_target: s.stranger.user.id });
    const unknownId = await ask(s, { user_target: 999999999 });
    const unknownEmail = await ask(s, { user_target: "nobody-at-all@example.test" });
    for (const res of [notOwner, unknownId, unknownEmail]) {
      expect(res.status).toBe(400);
      expect(res.json).toEqual(CANNOT_GRANT);
    }
    const noBundle = await ask(s, { bundle: "/api/bundle/999999999/" });
    expect(noBundle.status).toBe(400);
    expect(noBundle.json).toEqual({ error: "bundle: no such bundle" });
  });

  it.each([
    ["bundle", undefined, "bundle: is required"],
    ["bundle", "/api/user/1/", "bundle: must be a bundle URI (/api/bundle/<id>/) or id"],
    ["bundle", "https://evil.example/api/bundle/1/", "bundle: must be a bundle URI (/api/bundle/<id>/) or id"],
    ["user_allowed", null, "user_allowed: is required"],
    ["user_allowed", "not an e-mail@", "user_allowed: must be a user URI (/api/user/<id>/), e-mail or id"],
    ["user_allowed", "nobody-at-all@example.test", "user_allowed: no such user"],
    ["user_allowed", 999999999, "user_allowed: no such user"],
    ["user_target", undefined, "user_target: is required"],
    ["user_target", false, "user_target: must be a user URI (/api/user/<id>/), e-mail or id"],
  ])("refuses %s = %j with 400 %j", async (field, value, error) => {
    const s = await scene();
    const res = await ask(s, { [field]: value });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ error });
  });

  it("refuses a body that is not a JSON object, and a token without readwrite", async () => {
    const s = await scene();
    const array = await call("POST", LIST, { token: s.requester.accessToken, body: [1] });
    expect(array.status).toBe(400);
    expect(array.json).toEqual({ error: "body: must be a JSON object" });
    const form = await call("POST", LIST, { token: s.requester.accessToken, headers: { "content-type": "application/x-www-form-urlencoded" }, raw: "bundle=1" });
    expect(form.status).toBe(415);
    const reader = await passwordSession("readonly");
    const readonly = await ask(s, {}, reader.accessToken);
    expect(readonly.status).toBe(403);
    expect(readonly.headers.get("www-authenticate")).toBe('Bearer realm="api", error="insufficient_scope", scope="readwrite"');
    const anonymous = await call("POST", LIST, { body: {} });
    expect(anonymous.status).toBe(401);
  });

  it("is a 409 for the allowed user and the owner when user_allowed already has access, the owner included, and writes no request and no mail", async () => {
    const s = await scene();
    const grant = await call("POST", "/api/bundle_permission/", { token: s.owner.accessToken, body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id } });
    expect(grant.status).toBe(201);
    // Anyone else gets the 400 of a wrong target (docs/rules/permission-requests.md#creating-a-request;
    // src/permission-requests/abuse.int.test.ts).
    const allowedAlready = await ask(s, {}, s.allowed.accessToken);
    const owner = await ask(s, { user_allowed: s.owner.user.id }, s.owner.accessToken);
    for (const res of [allowedAlready, owner]) {
      expect(res.status).toBe(409);
      expect(res.json).toEqual({ error: "user_allowed: already has access to this bundle" });
    }
    expect(await (await db()).permissionRequest.count({ where: { bundleId: s.bundle.id } })).toBe(0);
    expect(await listMail({ to: s.owner.user.email })).toEqual([]);
  });

  it("is a 409 while an equal request is pending, with no second mail; concurrent equal creates give one 201", async () => {
    const s = await scene();
    const racing = await Promise.all(Array.from({ length: 6 }, () => ask(s)));
    expect(racing.map((res) => res.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    for (const res of racing.filter((r) => r.status === 409)) {
      expect(res.json).toEqual({ error: "a pending request for this bundle, user_allowed and user_target already exists" });
    }
    // A third party, who may not learn that the request exists, gets the 400 of a wrong target.
    const byStranger = await ask(s, {}, s.stranger.accessToken);
    expect(byStranger.status).toBe(400);
    expect(byStranger.json).toEqual(CANNOT_GRANT);
    expect(await listMail({ to: s.owner.user.email })).toHaveLength(1);
    expect(await (await db()).permissionRequest.count({ where: { bundleId: s.bundle.id } })).toBe(1);
    // Another allowed user is another request.
    expect((await ask(s, { user_allowed: s.stranger.user.id })).status).toBe(201);
  });

  it("lets a new request replace one that expired while pending, and one that was declined or withdrawn", async () => {
    const s = await scene();
    const first = await created(s, { ttl: 60 });
    advanceClock(61_000);
    const second = await created(s, { ttl: 60 });
    expect((await call("GET", first.resource_uri, { token: s.requester.accessToken })).json.status).toBe("expired");
    expect((await call("DELETE", second.resource_uri, { token: s.owner.accessToken })).status).toBe(204);
    const third = await created(s);
    expect((await call("DELETE", third.resource_uri, { token: s.requester.accessToken })).status).toBe(204);
    await created(s);
    expect(await listMail({ to: s.owner.user.email })).toHaveLength(4);
  });

  it("allows 20 creates an hour per requester, then 429 rate_limited with Retry-After, and no request or mail", async () => {
    const owner = await makeUser();
    const requester = await makeUser();
    const headers = await page(requester); // a session outlives the hour the clock moves below; a token would not
    const bundles = await Promise.all(Array.from({ length: 22 }, (_, i) => createBundle({ ownerId: owner.id, name: `b${i}` })));
    const askFor = (i: number) => call("POST", LIST, { headers, body: { bundle: bundles[i]!.id, user_allowed: requester.id, user_target: owner.id } });
    for (let i = 0; i < 20; i++) expect((await askFor(i)).status).toBe(201);
    const limited = await askFor(20);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: "rate_limited" });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(await (await db()).permissionRequest.count({ where: { requestedById: requester.id } })).toBe(20);
    expect(await listMail({ to: owner.email })).toHaveLength(20);
    // Other requesters are not limited by this one (asking another owner: this one was named 20 times).
    const other = await makeUser();
    const otherOwner = await makeUser();
    const otherBundle = await createBundle({ ownerId: otherOwner.id, name: "elsewhere" });
    const otherAsk = await call("POST", LIST, { headers: await page(other), body: { bundle: otherBundle.id, user_allowed: other.id, user_target: otherOwner.id } });
    expect(otherAsk.status).toBe(201);

    advanceClock(retryAfter * 1000);
    expect((await askFor(21)).status).toBe(201);
  });

  it("counts concurrent creates exactly: 25 at once past the hour's limit give 20 201s and 5 429s", async () => {
    const owner = await makeUser();
    const requester = await passwordSession();
    const bundles = await Promise.all(Array.from({ length: 25 }, (_, i) => createBundle({ ownerId: owner.id, name: `c${i}` })));
    const results = await Promise.all(
      bundles.map((bundle) => call("POST", LIST, { token: requester.accessToken, body: { bundle: bundle.id, user_allowed: requester.user.id, user_target: owner.id } })),
    );
    const statuses = results.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    expect(await listMail({ to: owner.email })).toHaveLength(20);
  });
});

describe("the e-mail", () => {
  it("writes exactly one mail to user_target, naming requester, allowed user and bundle, with a link that checks out", async () => {
    const s = await scene();
    const body = await created(s);
    const mails = await listMail({ to: s.owner.user.email });
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.status).toBe("pending");
    expect(mail.subject).toBe(`${s.requester.user.name} asks you to let ${s.allowed.user.name} read your bundle “Holiday photos”`);
    for (const part of [mail.text, mail.html]) {
      expect(part).toContain(s.requester.user.name);
      expect(part).toContain(s.allowed.user.name);
      expect(part).toContain("Holiday photos");
      // The target sees who really asks (docs/rules/permission-requests.md#who-sees-an-e-mail-address); the
      // allowed user was named by id, so not their e-mail.
      expect(part).toContain(s.requester.user.email);
      expect(part).not.toContain(s.allowed.user.email);
    }
    // The allowed user was named by id: the mail shows the id beside the name, as the pages do.
    expect(mail.text).toContain(`${s.allowed.user.name} (user ${s.allowed.user.id})`);
    expect(mail.text).toContain(`expires on ${formatDateTime(new Date(body.expires_at as string))}`);
    const { token, link } = await tokenFromMail(s.owner.user.email);
    expect(link.origin + link.pathname).toBe(`${APP}/redeem`);
    expect(mail.html).toContain(`href="${link.href}"`);
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const check = await call("GET", tokenPath(token), { token: s.owner.accessToken });
    expect(check.status).toBe(200);
    expect(check.json).toEqual({ ...body, bundle: { ...(body.bundle as object), owner: userRep(s.owner.user, s.owner.user) }, user_target: userRep(s.owner.user, s.owner.user), requested_by: { ...userRep(s.requester.user), email: s.requester.user.email } });
  });

  it("stores only the token's digest, and never answers the token in any response body", async () => {
    const s = await scene();
    const bodies: string[] = [];
    const record = async (res: Promise<{ text: string; status: number }>) => {
      const r = await res;
      bodies.push(r.text);
      return r;
    };
    const body = await created(s);
    const { token } = await tokenFromMail(s.owner.user.email);
    const row = await (await db()).permissionRequest.findUniqueOrThrow({ where: { id: body.id } });
    expect(row.tokenDigest).toBe(digest(token));
    expect(JSON.stringify(row)).not.toContain(token);

    await record(call("GET", LIST, { token: s.requester.accessToken }));
    await record(call("GET", body.resource_uri, { token: s.owner.accessToken }));
    await record(call("GET", tokenPath(token), { token: s.owner.accessToken }));
    await record(call("GET", tokenPath(token), { token: s.stranger.accessToken }));
    await record(call("PUT", tokenPath(token), { token: s.owner.accessToken }));
    await record(call("DELETE", tokenPath(token), { token: s.owner.accessToken }));
    const redeemed = await record(redeemAsPage(s.owner.user, token));
    expect(redeemed.status).toBe(200);
    await record(redeemAsPage(s.owner.user, token));
    await record(call("GET", LIST, { token: s.owner.accessToken }));
    expect(bodies.length).toBe(9);
    for (const text of bodies) expect(text).not.toContain(token);
  });

  it("says so when the requester asks for themself", async () => {
    const s = await scene();
    await created(s, { user_allowed: s.requester.user.id });
    const [mail] = await listMail({ to: s.owner.user.email });
    expect(mail!.subject).toBe(`${s.requester.user.name} asks you for access to your bundle “Holiday photos”`);
  });
});

describe("list and detail", () => {
  it("lists, newest first, the requests where the user is requester, target or allowed user, withdrawn ones included", async () => {
    const s = await scene();
    const first = await created(s);
    const second = await created(s, { user_allowed: s.requester.user.id });
    const elsewhere = await scene();
    await created(elsewhere);

    for (const who of [s.owner, s.requester]) {
      const res = await call("GET", LIST, { token: who.accessToken });
      expect(res.status).toBe(200);
      expect(res.json.meta).toEqual({ limit: 20, offset: 0, total_count: 2, next: null, previous: null });
      expect((res.json.objects as { id: number }[]).map((o) => o.id)).toEqual([second.id, first.id]);
    }
    const allowed = await call("GET", LIST, { token: s.allowed.accessToken });
    expect((allowed.json.objects as { id: number }[]).map((o) => o.id)).toEqual([first.id]);
    expect((allowed.json.objects as Record<string, unknown>[])[0]).toMatchObject({ user_allowed: userRep(s.allowed.user, s.allowed.user), status: "pending" });
    const stranger = await call("GET", LIST, { token: s.stranger.accessToken });
    expect(stranger.json).toEqual({ meta: { limit: 20, offset: 0, total_count: 0, next: null, previous: null }, objects: [] });

    expect((await call("DELETE", first.resource_uri, { token: s.requester.accessToken })).status).toBe(204);
    // A withdrawn request stays in the list, with its status (docs/rules/permission-requests.md#listing-and-reading).
    const after = await call("GET", `${LIST}?limit=1&offset=1`, { token: s.owner.accessToken });
    expect(after.json).toEqual({
      meta: { limit: 1, offset: 1, total_count: 2, next: null, previous: "/api/bundle_permission_request/?limit=1&offset=0" },
      objects: [expect.objectContaining({ id: first.id, status: "withdrawn" })],
    });
  });

  it("pages, and refuses filtering and sorting with a 400", async () => {
    const s = await scene();
    const ids = [];
    for (const allowed of [s.allowed.user, s.requester.user, s.stranger.user]) ids.push((await created(s, { user_allowed: allowed.id })).id);
    const res = await call("GET", `${LIST}?limit=2&offset=1`, { token: s.owner.accessToken });
    expect(res.json.meta).toEqual({ limit: 2, offset: 1, total_count: 3, next: null, previous: `${LIST}?limit=2&offset=0` });
    expect((res.json.objects as { id: number }[]).map((o) => o.id)).toEqual([ids[1], ids[0]]);
    for (const query of ["?status=pending", "?order_by=-created_at", "?bundle=1"]) {
      const refused = await call("GET", LIST + query, { token: s.owner.accessToken });
      expect(refused.status).toBe(400);
      expect(refused.json).toEqual({ error: "filtering is not supported" });
    }
  });

  it("shows a request by id to its parties only; anyone else gets 404 as for an unknown id", async () => {
    const s = await scene();
    const body = await created(s);
    for (const who of [s.owner, s.requester, s.allowed]) {
      const res = await call("GET", body.resource_uri, { token: who.accessToken });
      expect(res.status).toBe(200);
      expect(res.json.id).toBe(body.id);
      expect(res.json.status).toBe("pending");
    }
    for (const path of [body.resource_uri, `${LIST}999999999/`, `${LIST}0/`]) {
      const res = await call("GET", path, { token: s.stranger.accessToken });
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: "no such permission request" });
    }
    const readonly = await call("GET", body.resource_uri.replace(/\/$/, ""), { token: s.owner.accessToken });
    expect(readonly.status).toBe(200);
  });

  it("reports a pending request past its expiry as expired", async () => {
    const s = await scene();
    const body = await created(s, { ttl: 60 });
    advanceClock(60_000);
    const res = await call("GET", body.resource_uri, { token: s.requester.accessToken });
    expect(res.json).toMatchObject({ status: "expired", redeemed_at: null });
  });
});

describe("check a token (GET)", () => {
  it("answers user_target 200 with the record, and everyone else 403; an unknown token 404", async () => {
    const s = await scene();
    const body = await created(s);
    const { token } = await tokenFromMail(s.owner.user.email);
    const ok = await call("GET", tokenPath(token), { token: s.owner.accessToken });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("cache-control")).toBe("no-store");
    expect(ok.json).toMatchObject({ id: body.id, status: "pending" });
    const readonlyTarget = await call("GET", tokenPath(token).replace(/\/$/, ""), { headers: { cookie: await sessionCookie(s.owner.user) } });
    expect(readonlyTarget.status).toBe(200);
    for (const who of [s.requester, s.allowed, s.stranger]) {
      const res = await call("GET", tokenPath(token), { token: who.accessToken });
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ error: "only the user asked (user_target) can use this token" });
    }
    const unknown = await call("GET", tokenPath("x".repeat(43)), { token: s.owner.accessToken });
    expect(unknown.status).toBe(404);
    expect(unknown.json).toEqual({ error: "no such permission request token" });
    expect((await call("GET", tokenPath(token))).status).toBe(401);
    // Checking changes nothing: mail scanners follow links.
    expect((await call("GET", tokenPath(token), { token: s.owner.accessToken })).json.status).toBe("pending");
  });

  it.each([
    ["redeemed", "this request has already been redeemed"],
    ["declined", "this request was declined"],
    ["deleted", "this request was deleted"],
    ["expired", "this request has expired"],
  ])("answers 410 once the request is %s, also to check and redeem", async (how, error) => {
    const s = await scene();
    const body = await created(s, { ttl: 60 });
    const { token } = await tokenFromMail(s.owner.user.email);
    if (how === "redeemed") expect((await redeemAsPage(s.owner.user, token)).status).toBe(200);
    if (how === "declined") expect((await call("DELETE", body.resource_uri, { token: s.owner.accessToken })).status).toBe(204);
    if (how === "deleted") expect((await call("DELETE", body.resource_uri, { token: s.requester.accessToken })).status).toBe(204);
    if (how === "expired") advanceClock(60_000);
    const check = await call("GET", tokenPath(token), { token: s.owner.accessToken });
    expect({ status: check.status, body: check.json }).toEqual({ status: 410, body: { error } });
    const redeem = await redeemAsPage(s.owner.user, token);
    expect({ status: redeem.status, body: redeem.json }).toEqual({ status: 410, body: { error } });
    // Still 403 for anyone else: a used token tells them nothing new.
    expect((await call("GET", tokenPath(token), { token: s.stranger.accessToken })).status).toBe(403);
  });
});

describe("redeem a token (PUT)", () => {
  it("redeems from the service's own pages: 200 with the record, now redeemed, and the allowed user is in", async () => {
    const s = await scene();
    const body = await created(s);
    const { token } = await tokenFromMail(s.owner.user.email);
    expect((await call("GET", s.bundle.resource_uri, { token: s.allowed.accessToken })).status).toBe(404);
    const res = await redeemAsPage(s.owner.user, token);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.json).toMatchObject({ id: body.id, status: "redeemed", redeemed_at: expect.stringMatching(ISO), user_target: userRep(s.owner.user, s.owner.user) });
    const bundle = await call("GET", s.bundle.resource_uri, { token: s.allowed.accessToken });
    expect(bundle.status).toBe(200);
    const permissions = await call("GET", "/api/bundle_permission/", { token: s.allowed.accessToken });
    expect(permissions.json.objects).toEqual([expect.objectContaining({ bundle: expect.objectContaining({ id: s.bundle.id }), user_allowed: userRep(s.allowed.user, s.allowed.user), user_target: userRep(s.owner.user) })]);
    const listed = await call("GET", body.resource_uri, { token: s.requester.accessToken });
    expect(listed.json).toMatchObject({ status: "redeemed", redeemed_at: res.json.redeemed_at });
  });

  it("redeems with a first-party client's token, but refuses a third-party client's token with 403", async () => {
    const s = await scene();
    await created(s);
    const { token } = await tokenFromMail(s.owner.user.email);
    const thirdParty = await call("PUT", tokenPath(token), { token: s.owner.accessToken });
    expect(thirdParty.status).toBe(403);
    expect(thirdParty.json).toEqual({ error: "permission tokens are redeemed on this service's own pages, not by third-party applications" });
    expect((await call("GET", tokenPath(token), { token: s.owner.accessToken })).json.status).toBe("pending");
    const firstParty = await call("PUT", tokenPath(token), { token: await firstPartyToken(s.owner.user) });
    expect(firstParty.status).toBe(200);
    expect(firstParty.json.status).toBe("redeemed");
  });

  it("refuses everyone but user_target with 403, an unknown token with 404, readonly with 403, and a cookie from elsewhere", async () => {
    const s = await scene();
    await created(s);
    const { token } = await tokenFromMail(s.owner.user.email);
    for (const who of [s.requester.user, s.allowed.user, s.stranger.user]) {
      const res = await redeemAsPage(who, token);
      expect(res.status).toBe(403);
      expect(res.json).toEqual({ error: "only the user asked (user_target) can use this token" });
    }
    const unknown = await redeemAsPage(s.owner.user, "y".repeat(43));
    expect(unknown.status).toBe(404);
    const ownerFirstParty = await firstPartyToken(s.owner.user);
    const readonlyClient = await makeClient({ ownerId: s.owner.user.id, firstParty: true });
    const readonlyToken = (await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "password", client_id: readonlyClient.client_id, client_secret: readonlyClient.client_secret, username: s.owner.user.email, password: s.owner.user.password, scope: "readonly" },
    })).json.access_token as string;
    const readonly = await call("PUT", tokenPath(token), { token: readonlyToken });
    expect(readonly.status).toBe(403);
    expect(readonly.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    const crossSite = await call("PUT", tokenPath(token), { headers: { cookie: await sessionCookie(s.owner.user), origin: "https://evil.example" } });
    expect(crossSite.status).toBe(403);
    expect((await call("GET", tokenPath(token), { token: ownerFirstParty })).json.status).toBe("pending");
    expect(await (await db()).bundlePermission.count({ where: { bundleId: s.bundle.id } })).toBe(0);
  });

  it("still redeems when the owner granted the same access directly in the meantime", async () => {
    const s = await scene();
    await created(s);
    const { token } = await tokenFromMail(s.owner.user.email);
    expect((await call("POST", "/api/bundle_permission/", { token: s.owner.accessToken, body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id } })).status).toBe(201);
    const res = await redeemAsPage(s.owner.user, token);
    expect(res.status).toBe(200);
    expect(await (await db()).bundlePermission.count({ where: { bundleId: s.bundle.id } })).toBe(1);
  });

  it("is a 405 on a resource_uri, which redeems nothing; DELETE on a token path is a 405 too", async () => {
    const s = await scene();
    const body = await created(s);
    const { token } = await tokenFromMail(s.owner.user.email);
    const putId = await call("PUT", body.resource_uri, { headers: await page(s.owner.user) });
    expect(putId.status).toBe(405);
    expect(putId.headers.get("allow")).toBe("GET, DELETE, OPTIONS, HEAD");
    expect(putId.json).toEqual({ error: "method not allowed: a permission request's resource_uri is not its redeem address" });
    const deleteToken = await call("DELETE", tokenPath(token), { headers: await page(s.owner.user) });
    expect(deleteToken.status).toBe(405);
    expect(deleteToken.headers.get("allow")).toBe("GET, PUT, OPTIONS, HEAD");
    expect(deleteToken.json).toEqual({ error: "method not allowed: delete a request at its resource_uri" });
    const post = await call("POST", body.resource_uri, { token: s.owner.accessToken, body: {} });
    expect(post.status).toBe(405);
    expect((await call("GET", tokenPath(token), { token: s.owner.accessToken })).json.status).toBe("pending");
    expect(await (await db()).bundlePermission.count({ where: { bundleId: s.bundle.id } })).toBe(0);
  });
});

describe("delete (DELETE on resource_uri)", () => {
  it("lets the requester withdraw it: 204, then read and listed as withdrawn, its token 410, and a second delete 404", async () => {
    const s = await scene();
    const body = await created(s);
    const res = await call("DELETE", body.resource_uri, { token: s.requester.accessToken });
    expect(res.status).toBe(204);
    expect(res.text).toBe("");
    const row = await (await db()).permissionRequest.findUniqueOrThrow({ where: { id: body.id } });
    expect(row).toMatchObject({ status: "pending", pendingKey: null, deletedAt: expect.any(Date), endedAt: expect.any(Date) });
    // The requester still sees what became of it (docs/rules/permission-requests.md#listing-and-reading).
    const read = await call("GET", body.resource_uri, { token: s.requester.accessToken });
    expect({ status: read.status, state: read.json.status }).toEqual({ status: 200, state: "withdrawn" });
    const list = await call("GET", LIST, { token: s.requester.accessToken });
    expect((list.json.objects as { id: number; status: string }[]).map((r) => [r.id, r.status])).toEqual([[body.id, "withdrawn"]]);
    expect((await call("DELETE", body.resource_uri, { token: s.requester.accessToken })).status).toBe(404);
    // No mail goes out for a withdrawal: the one message is the owner's request.
    expect(await (await db()).mailMessage.count({ where: { permissionRequestId: body.id } })).toBe(1);
  });

  it("makes it declined when the target deletes it", async () => {
    const s = await scene();
    const body = await created(s);
    expect((await call("DELETE", body.resource_uri, { token: s.owner.accessToken })).status).toBe(204);
    const row = await (await db()).permissionRequest.findUniqueOrThrow({ where: { id: body.id } });
    expect(row).toMatchObject({ status: "declined", pendingKey: null, deletedAt: expect.any(Date) });
    // Every party reads it as declined, in the list and at its resource_uri.
    for (const party of [s.requester, s.owner, s.allowed]) {
      const read = await call("GET", body.resource_uri, { token: party.accessToken });
      expect({ status: read.status, state: read.json.status }).toEqual({ status: 200, state: "declined" });
      const list = await call("GET", LIST, { token: party.accessToken });
      expect((list.json.objects as { id: number; status: string }[]).map((r) => [r.id, r.status])).toEqual([[body.id, "declined"]]);
    }
    expect((await call("GET", body.resource_uri, { token: s.stranger.accessToken })).status).toBe(404);
  });

  it("mails the requester when the target declines, in the transaction of the decline (docs/rules/permission-requests.md#declining-mails-the-requester)", async () => {
    const s = await scene();
    const body = await created(s);
    expect((await call("DELETE", body.resource_uri, { token: s.owner.accessToken })).status).toBe(204);
    const mails = await (await db()).mailMessage.findMany({ where: { permissionRequestId: body.id, kind: "permission_request_declined" } });
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.to).toBe(s.requester.user.email);
    expect(mail.subject).toBe(`Your request for “${s.bundle.name}” was declined`);
    // The owner appears by name and user id: the requester does not learn the owner's address.
    expect(mail.text).toContain(`${s.owner.user.name} (user ${s.owner.user.id}) declined your request`);
    expect(mail.text).not.toContain(s.owner.user.email);
    expect(mail.text).toContain("/settings/sharing#requests-you-sent");
    // A second decline (already ended) writes no second mail.
    expect((await call("DELETE", body.resource_uri, { token: s.owner.accessToken })).status).toBe(404);
    expect(await (await db()).mailMessage.count({ where: { permissionRequestId: body.id, kind: "permission_request_declined" } })).toBe(1);
  });

  it("refuses the allowed user with 403 and anyone else with 404; needs readwrite", async () => {
    const s = await scene();
    const body = await created(s);
    const allowed = await call("DELETE", body.resource_uri, { token: s.allowed.accessToken });
    expect(allowed.status).toBe(403);
    expect(allowed.json).toEqual({ error: "only the requester or user_target can delete this request" });
    const stranger = await call("DELETE", body.resource_uri, { token: s.stranger.accessToken });
    expect(stranger.status).toBe(404);
    expect(stranger.json).toEqual({ error: "no such permission request" });
    const unknown = await call("DELETE", `${LIST}999999999/`, { token: s.owner.accessToken });
    expect(unknown.status).toBe(404);
    const reader = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "password", client_id: s.owner.client.client_id, client_secret: s.owner.client.client_secret, username: s.owner.user.email, password: s.owner.user.password, scope: "readonly" },
    });
    const readonly = await call("DELETE", body.resource_uri, { token: reader.json.access_token as string });
    expect(readonly.status).toBe(403);
    expect((await call("GET", body.resource_uri, { token: s.owner.accessToken })).json.status).toBe("pending");
  });

  it("is a 409 for a redeemed request, which stays listed", async () => {
    const s = await scene();
    const body = await created(s);
    const { token } = await tokenFromMail(s.owner.user.email);
    expect((await redeemAsPage(s.owner.user, token)).status).toBe(200);
    for (const who of [s.owner, s.requester]) {
      const res = await call("DELETE", body.resource_uri, { token: who.accessToken });
      expect(res.status).toBe(409);
      expect(res.json).toEqual({ error: "this request was redeemed: revoke the bundle permission instead" });
    }
    expect((await call("GET", LIST, { token: s.owner.accessToken })).json.meta).toMatchObject({ total_count: 1 });
  });
});
