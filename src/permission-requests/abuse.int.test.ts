// Permission-request create as an attacker would probe it
// (docs/rules/permission-requests.md#creating-a-request): no answer may reveal who owns a bundle or who was
// let into it, refused creates cost the requester, one target can be named only so often, an unconfirmed
// address is never mailed, and whose e-mail the record shows. Every scene has its own users and bundle, since
// the database is shared with test files running at once.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, resetClock } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { listMail } from "@/email/list-mail";
import { db, write } from "@/db/client";
import { call } from "@/testing/app";
import { makeUser, passwordSession } from "@/testing/factories";
import { sessionCookie } from "@/testing/session";

const LIST = "/api/bundle_permission_request/";
const APP = "http://localhost:3000";
const CANNOT_GRANT = { error: "user_target: cannot grant access to this bundle" };
const NO_SUCH_ALLOWED = { error: "user_allowed: no such user" };
const HOUR = 3600 * 1000;

afterEach(() => resetClock());

type Session = Awaited<ReturnType<typeof passwordSession>>;
type User = Session["user"];

async function scene() {
  const [owner, requester, allowed, stranger] = await Promise.all([passwordSession(), passwordSession(), passwordSession(), passwordSession()]);
  const bundle = await createBundle({ ownerId: owner.user.id, name: "Holiday photos" });
  return { owner, requester, allowed, stranger, bundle };
}
type Scene = Awaited<ReturnType<typeof scene>>;

/** A session cookie outlives the clock moves below (a token would expire after an hour). */
const asPage = async (user: User) => ({ cookie: await sessionCookie(user), origin: APP });

function ask(s: Scene, extra: Record<string, unknown> = {}, token = s.requester.accessToken) {
  return call("POST", LIST, {
    token,
    body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id, user_target: s.owner.user.id, ...extra },
  });
}

const answer = (res: { status: number; json: unknown }) => ({ status: res.status, body: res.json });

async function unconfirm(user: User) {
  await write((tx) => tx.user.update({ where: { id: user.id }, data: { emailVerifiedAt: null } }));
}

describe("create reveals nothing about who owns a bundle or who may read it", () => {
  it("resolves user_allowed before looking at ownership: the same answer whoever is named as target", async () => {
    const s = await scene();
    const answers = [];
    for (const target of [s.owner.user.id, s.stranger.user.id, 999999999, "nobody-at-all@example.test"]) {
      answers.push(answer(await ask(s, { user_target: target, user_allowed: "no-such-person@example.test" })));
    }
    expect(answers).toEqual(Array.from({ length: 4 }, () => ({ status: 400, body: NO_SUCH_ALLOWED })));
  });

  it("answers a third party asking for someone who is already in the same 400 as a wrong target", async () => {
    const s = await scene();
    const grant = await call("POST", "/api/bundle_permission/", { token: s.owner.accessToken, body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id } });
    expect(grant.status).toBe(201);
    const member = answer(await ask(s));
    const ownerAsAllowed = answer(await ask(s, { user_allowed: s.owner.user.id }));
    const wrongTarget = answer(await ask(s, { user_target: s.stranger.user.id, user_allowed: s.requester.user.id }));
    expect([member, ownerAsAllowed, wrongTarget]).toEqual([
      { status: 400, body: CANNOT_GRANT },
      { status: 400, body: CANNOT_GRANT },
      { status: 400, body: CANNOT_GRANT },
    ]);
    expect(await (await db()).permissionRequest.count({ where: { bundleId: s.bundle.id } })).toBe(0);
    expect(await listMail({ to: s.owner.user.email })).toEqual([]);
  });

  it("tells the allowed user and the owner (who know it) that the allowed user already has access: 409", async () => {
    const s = await scene();
    expect((await call("POST", "/api/bundle_permission/", { token: s.owner.accessToken, body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id } })).status).toBe(201);
    const ALREADY = { status: 409, body: { error: "user_allowed: already has access to this bundle" } };
    expect(answer(await ask(s, {}, s.allowed.accessToken))).toEqual(ALREADY);
    expect(answer(await ask(s, {}, s.owner.accessToken))).toEqual(ALREADY);
    expect(answer(await ask(s, { user_allowed: s.owner.user.id }, s.owner.accessToken))).toEqual(ALREADY);
  });

  it("answers a third party whose request equals someone else's pending one the same 400; its parties get the 409", async () => {
    const s = await scene();
    expect((await ask(s)).status).toBe(201);
    expect(answer(await ask(s, {}, s.stranger.accessToken))).toEqual({ status: 400, body: CANNOT_GRANT });
    const PENDING = { status: 409, body: { error: "a pending request for this bundle, user_allowed and user_target already exists" } };
    for (const who of [s.requester, s.allowed, s.owner]) expect(answer(await ask(s, {}, who.accessToken))).toEqual(PENDING);
    expect(await listMail({ to: s.owner.user.email })).toHaveLength(1);
  });

  it("answers a target whose address is not confirmed like an unknown target, and mails nothing", async () => {
    const s = await scene();
    await unconfirm(s.owner.user);
    expect(answer(await ask(s))).toEqual({ status: 400, body: CANNOT_GRANT });
    expect(answer(await ask(s, { user_target: s.owner.user.email }))).toEqual({ status: 400, body: CANNOT_GRANT });
    expect(await listMail({ to: s.owner.user.email })).toEqual([]);
    expect(await (await db()).permissionRequest.count({ where: { bundleId: s.bundle.id } })).toBe(0);
  });
});

describe("create is limited so that nobody can probe or flood", () => {
  it("counts refused creates: after 60 in an hour every create is 429 with Retry-After, even a valid one", async () => {
    const s = await scene();
    const headers = await asPage(s.requester.user);
    const refusals = [
      { user_target: s.stranger.user.id },
      { user_allowed: "no-such-person@example.test" },
      { bundle: 999999999 },
    ];
    for (let i = 0; i < 60; i++) {
      const res = await call("POST", LIST, { headers, body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id, user_target: s.owner.user.id, ...refusals[i % 3] } });
      expect(res.status).toBe(400);
    }
    const limited = await call("POST", LIST, { headers, body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id, user_target: s.owner.user.id } });
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: "rate_limited" });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    // Probing on gets the same 429, whatever the request names.
    expect(answer(await call("POST", LIST, { headers, body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id, user_target: s.stranger.user.id } }))).toEqual({ status: 429, body: { error: "rate_limited" } });
    expect(await listMail({ to: s.owner.user.email })).toEqual([]);
    // Another requester is not affected.
    expect((await ask(s, {}, s.stranger.accessToken)).status).toBe(201);

    advanceClock(retryAfter * 1000);
    expect((await call("POST", LIST, { headers, body: { bundle: s.bundle.id, user_allowed: s.requester.user.id, user_target: s.owner.user.id } })).status).toBe(201);
  });

  it("does not count malformed bodies, which reveal nothing", async () => {
    const s = await scene();
    const headers = await asPage(s.requester.user);
    for (let i = 0; i < 61; i++) expect((await call("POST", LIST, { headers, body: { bundle: "not a bundle" } })).status).toBe(400);
    expect((await call("POST", LIST, { headers, body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id, user_target: s.owner.user.id } })).status).toBe(201);
  });

  it("allows 20 requests an hour naming one target, from any number of requesters, then 429", async () => {
    const owner = await makeUser();
    const requesters = await Promise.all(Array.from({ length: 21 }, () => makeUser()));
    const bundle = await createBundle({ ownerId: owner.id, name: "Popular" });
    const askAs = async (user: User) => call("POST", LIST, { headers: await asPage(user), body: { bundle: bundle.id, user_allowed: user.id, user_target: owner.id } });
    for (const requester of requesters.slice(0, 20)) expect((await askAs(requester)).status).toBe(201);
    const limited = await askAs(requesters[20]!);
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: "rate_limited" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(3500);
    expect(await listMail({ to: owner.email })).toHaveLength(20);
    advanceClock(HOUR);
    expect((await askAs(requesters[20]!)).status).toBe(201);
  });

  it("counts only 400 and 409 as refused creates: the 429s of the create limit do not, nor are they mailed; each 429 is audited as rate_limited, a 400 is not", async () => {
    const owner = await makeUser();
    const requester = await makeUser();
    const stranger = await makeUser();
    const headers = await asPage(requester);
    const bundles = await Promise.all(Array.from({ length: 21 }, (_, i) => createBundle({ ownerId: owner.id, name: `b${i}` })));
    const askFor = (i: number, target = owner.id) => call("POST", LIST, { headers, body: { bundle: bundles[i]!.id, user_allowed: requester.id, user_target: target } });
    const rateLimited = async () =>
      (await (await db()).auditEvent.findMany({ where: { type: "rate_limited", userId: requester.id } })).map((e) => ({ clientId: e.clientId, detail: JSON.parse(e.detail!) as unknown }));

    // A refused create (400) counts as one, and is not a rate limit.
    expect(answer(await askFor(0, stranger.id))).toEqual({ status: 400, body: CANNOT_GRANT });
    expect(await rateLimited()).toEqual([]);

    // The create limit: 20 an hour, the first ten minutes before the others, so that the 429 says when the oldest leaves.
    expect((await askFor(0)).status).toBe(201);
    advanceClock(10 * 60 * 1000);
    for (let i = 1; i < 20; i++) expect((await askFor(i)).status).toBe(201);
    const limited = await askFor(20);
    expect(answer(limited)).toEqual({ status: 429, body: { error: "rate_limited" } });
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(2990);
    expect(retryAfter).toBeLessThanOrEqual(3000);
    expect(await rateLimited()).toEqual([{ clientId: null, detail: { limit: "permission_request" } }]);

    // 60 more 429s: were they refusals, with the one 400 above the requester would be past REFUSED_LIMIT (60).
    for (let i = 0; i < 60; i++) expect((await askFor(20)).status).toBe(429);
    expect(await rateLimited()).toHaveLength(61);
    advanceClock(retryAfter * 1000);
    expect((await askFor(20)).status).toBe(201);
    expect(await listMail({ to: owner.email })).toHaveLength(21);
  });

  it("counts concurrent requests naming one target exactly: 25 requesters at once give 20 201s and 5 429s", async () => {
    const owner = await makeUser();
    const bundle = await createBundle({ ownerId: owner.id, name: "Contended" });
    const requesters = await Promise.all(Array.from({ length: 25 }, () => passwordSession()));
    const results = await Promise.all(
      requesters.map((r) => call("POST", LIST, { token: r.accessToken, body: { bundle: bundle.id, user_allowed: r.user.id, user_target: owner.id } })),
    );
    const statuses = results.map((res) => res.status);
    expect(statuses.filter((status) => status === 201)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(5);
    expect(await listMail({ to: owner.email })).toHaveLength(20);
  });

  it("records permission_request.created with the requester, the client and the client address, with the request", async () => {
    const s = await scene();
    // The server in front appends the socket's address to X-Forwarded-For (src/http/client-address.ts).
    const res = await call("POST", LIST, {
      token: s.requester.accessToken,
      headers: { "x-forwarded-for": "198.51.100.1, 203.0.113.99" },
      body: { bundle: s.bundle.id, user_allowed: s.allowed.user.id, user_target: s.owner.user.id },
    });
    expect(res.status).toBe(201);
    const events = await (await db()).auditEvent.findMany({ where: { type: "permission_request.created", userId: s.requester.user.id } });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ userId: s.requester.user.id, clientId: s.requester.client.client_id, ip: "203.0.113.99" });
    const event = events[0];
    expect(JSON.parse(event!.detail!)).toEqual({ request: res.json.id, bundle: s.bundle.id, target: s.owner.user.id });
  });
});

describe("whose e-mail a permission request shows", () => {
  it("shows user_target the requester's e-mail, and the allowed user's only when the requester named them by e-mail", async () => {
    const s = await scene();
    const byEmail = await ask(s, { user_allowed: s.allowed.user.email });
    const byId = await ask(s, { user_allowed: s.stranger.user.id });
    for (const res of [byEmail, byId]) expect(res.status).toBe(201);
    type Rep = { id: number; name: string; email?: string };
    type Record = { requested_by: Rep; user_allowed: Rep; user_target: Rep; bundle: { owner: Rep } };
    const seen = async (id: unknown, who: Session) => (await call("GET", `${LIST}${String(id)}/`, { token: who.accessToken })).json as unknown as Record;

    const targetByEmail = await seen(byEmail.json.id, s.owner);
    expect(targetByEmail.requested_by).toEqual({ id: s.requester.user.id, resource_uri: `/api/user/${s.requester.user.id}/`, name: s.requester.user.name, email: s.requester.user.email });
    expect(targetByEmail.user_allowed.email).toBe(s.allowed.user.email);
    const targetById = await seen(byId.json.id, s.owner);
    expect(targetById.requested_by.email).toBe(s.requester.user.email);
    expect(targetById.user_allowed).toEqual({ id: s.stranger.user.id, resource_uri: `/api/user/${s.stranger.user.id}/`, name: s.stranger.user.name });

    // The requester and the allowed user see names only (and their own e-mail).
    const requesterView = await seen(byEmail.json.id, s.requester);
    expect(requesterView.user_target.email).toBeUndefined();
    expect(requesterView.bundle.owner.email).toBeUndefined();
    expect(requesterView.requested_by.email).toBe(s.requester.user.email);
    const allowedView = await seen(byEmail.json.id, s.allowed);
    expect(allowedView.requested_by.email).toBeUndefined();
    expect(allowedView.user_target.email).toBeUndefined();
    expect(allowedView.user_allowed.email).toBe(s.allowed.user.email);
  });
});

describe("the mail a permission request writes", () => {
  const mailOf = async (requestId: number) => (await db()).mailMessage.findFirstOrThrow({ where: { permissionRequestId: requestId } });

  it("writes the names people chose so that mail clients do not turn them into links", async () => {
    const s = await scene();
    await write((tx) => tx.user.update({ where: { id: s.requester.user.id }, data: { name: "Rita (urgent: see https://evil.example/login)" } }));
    const bundle = await createBundle({ ownerId: s.owner.user.id, name: "www.evil.example" });
    const res = await ask(s, { bundle: bundle.id });
    expect(res.status).toBe(201);
    const mail = await mailOf(res.json.id as number);
    for (const part of [mail.subject, mail.text, mail.html]) {
      expect(part).toContain("www[.]evil[.]example");
      expect(part).toContain("https[:]//evil[.]example/login");
      expect(part).not.toContain("evil.example");
    }
    // The API answers the names as they are.
    expect(res.json.bundle).toMatchObject({ name: "www.evil.example" });
  });

  it("keeps the link while the mail is unsent, and replaces it by a note once the provider accepted it", async () => {
    const { deliverDue } = await import("@/email/deliver");
    const { LINK_REMOVED_NOTE } = await import("@emails/link-removed");
    const s = await scene();
    const res = await ask(s);
    expect(res.status).toBe(201);
    const before = await mailOf(res.json.id as number);
    const token = /[?&]token=([A-Za-z0-9_-]{43})/.exec(before.text)?.[1];
    expect(token).toBeDefined();
    expect(before.html).toContain(token!);
    expect(before).toMatchObject({ status: "pending", kind: "permission_request" });

    // A provider that refuses once, then accepts: the failed attempt keeps the link for the retry.
    const sent: { text: string; html: string }[] = [];
    let calls = 0;
    const transport = async (message: { text: string; html: string }) => {
      if (++calls === 1) throw new Error("provider unavailable");
      sent.push({ text: message.text, html: message.html });
      return { providerId: "p-1" };
    };
    await deliverDue({ transport, ids: [before.id] });
    expect((await mailOf(res.json.id as number)).text).toContain(token!);
    advanceClock(61_000);
    expect(await deliverDue({ transport, ids: [before.id] })).toMatchObject({ sent: 1 });

    // What was delivered carried the link; what is kept does not.
    expect(sent[0]!.text).toContain(token!);
    expect(sent[0]!.html).toContain(token!);
    const after = await mailOf(res.json.id as number);
    expect(after).toMatchObject({ status: "sent", redactedText: null, redactedHtml: null });
    for (const part of [after.text, after.html]) {
      expect(part).not.toContain(token!);
      expect(part).not.toMatch(/[?&]token=/);
      expect(part).toContain(LINK_REMOVED_NOTE);
      expect(part).toContain(s.requester.user.name);
    }
    const listed = await listMail({ to: s.owner.user.email });
    expect(JSON.stringify(listed)).not.toContain(token!);
    // The token itself still works: only the stored copy lost it.
    expect((await call("GET", `${LIST}${token}/`, { token: s.owner.accessToken })).status).toBe(200);
  });

  it("prunes the mail with its request in tokens:prune, 30 days after the request ended", async () => {
    const { pruneTokens } = await import("@/maintenance/prune-tokens");
    const s = await scene();
    const res = await ask(s);
    const declined = await call("DELETE", `${LIST}${res.json.id}/`, { token: s.owner.accessToken });
    expect(declined.status).toBe(204);
    const mail = await mailOf(res.json.id as number);
    await pruneTokens();
    expect(await (await db()).mailMessage.count({ where: { id: mail.id } })).toBe(1);

    advanceClock(31 * 24 * HOUR);
    const counts = await pruneTokens();
    expect(counts.permission_requests).toBeGreaterThanOrEqual(1);
    expect(counts.mail_messages).toBeGreaterThanOrEqual(1);
    expect(await (await db()).permissionRequest.count({ where: { id: res.json.id as number } })).toBe(0);
    expect(await (await db()).mailMessage.count({ where: { id: mail.id } })).toBe(0);
  });
});
