// Edges of /api/bundle_permission_request/ (docs/rules/permission-requests.md) that the main suite does not
// reach: keys that are too long to be ids, the input schema on its own (ttl and redeem_url), statuses at the
// exact moment of expiry, list order among requests made in the same millisecond, and who sees a request once
// it ended.
import { afterEach, describe, expect, it } from "vitest";
import { advanceClock, nowMs, resetClock } from "@/clock";
import { createBundle } from "@/bundles/create-bundle";
import { ApiError } from "@/http/errors";
import { parseInput } from "@/http/validate";
import { ALLOWED_METHODS, parseRequestKey } from "@/permission-requests/key";
import { endedReason, statusOf } from "@/permission-requests/represent";
import { DEFAULT_TTL, MAX_TTL, MIN_TTL, ZCreatePermissionRequest } from "@/permission-requests/schemas";
import { digest, randomSecret } from "@/secrets";
import { write } from "@/db/client";
import { BASE, call } from "@/testing/app";
import { makeUser, passwordSession } from "@/testing/factories";

afterEach(() => resetClock());

const LIST = "/api/bundle_permission_request/";

describe("keys", () => {
  it("reads digits as an id, a key too long to be one as id 0, and anything else as a token", () => {
    expect(parseRequestKey("42")).toEqual({ kind: "id", id: 42 });
    expect(parseRequestKey("123456789012")).toEqual({ kind: "id", id: 123456789012 });
    expect(parseRequestKey("1234567890123")).toEqual({ kind: "id", id: 0 });
    expect(parseRequestKey("42a")).toEqual({ kind: "token", token: "42a" });
    expect(ALLOWED_METHODS).toEqual({ id: ["GET", "DELETE", "OPTIONS", "HEAD"], token: ["GET", "PUT", "OPTIONS", "HEAD"] });
  });

  it("answers 404 for an id too long to exist, and 405 for a PUT on it", async () => {
    const { accessToken } = await passwordSession();
    const get = await call("GET", `${LIST}1234567890123/`, { token: accessToken });
    expect({ status: get.status, body: get.json }).toEqual({ status: 404, body: { error: "no such permission request" } });
    const del = await call("DELETE", `${LIST}1234567890123/`, { token: accessToken });
    expect({ status: del.status, body: del.json }).toEqual({ status: 404, body: { error: "no such permission request" } });
    const put = await call("PUT", `${LIST}1234567890123/`, { token: accessToken });
    expect({ status: put.status, allow: put.headers.get("allow"), body: put.json }).toEqual({
      status: 405,
      allow: "GET, DELETE, OPTIONS, HEAD",
      body: { error: "method not allowed: a permission request's resource_uri is not its redeem address" },
    });
  });
});

describe("the input schema", () => {
  const parse = (extra: Record<string, unknown>) => {
    try {
      return parseInput(ZCreatePermissionRequest, { bundle: 1, user_allowed: 2, user_target: 3, ...extra });
    } catch (error) {
      if (error instanceof ApiError) return { status: error.status, error: error.error };
      throw error;
    }
  };

  it("takes ttl from 60 to 2592000 seconds, as a number or digits with spaces around, 7 days when blank", () => {
    expect([DEFAULT_TTL, MIN_TTL, MAX_TTL]).toEqual([604800, 60, 2592000]);
    expect(parse({ ttl: " 3600 " })).toMatchObject({ ttl: 3600 });
    expect(parse({ ttl: "60" })).toMatchObject({ ttl: 60 });
    expect(parse({ ttl: 2592000 })).toMatchObject({ ttl: 2592000 });
    expect(parse({ ttl: undefined })).toMatchObject({ ttl: 604800 });
    expect(parse({ ttl: "\t" })).toMatchObject({ ttl: 604800 });
    for (const ttl of ["123456789", "59", "2592001", "-60", "6 0", 1e400]) {
      expect(parse({ ttl }), String(ttl)).toEqual({ status: 400, error: "ttl: must be an integer from 60 to 2592000" });
    }
  });

  it("takes redeem_url up to 2048 characters on APP_URL's /redeem, drops a planted token, and refuses the rest", () => {
    const refused = { status: 400, error: "redeem_url: must be the /redeem page of http://localhost:3000, e.g. /redeem" };
    const longQuery = `/redeem?q=${"a".repeat(2048 - "/redeem?q=".length)}`;
    expect(longQuery).toHaveLength(2048);
    expect(parse({ redeem_url: longQuery })).toMatchObject({ redeem_url: `${BASE}${longQuery}` });
    expect(parse({ redeem_url: `${longQuery}a` })).toEqual(refused);
    expect(parse({ redeem_url: " /redeem?x=1&token=planted " })).toMatchObject({ redeem_url: `${BASE}/redeem?x=1` });
    expect(parse({ redeem_url: undefined })).toMatchObject({ redeem_url: `${BASE}/redeem` });
    for (const redeemUrl of ["http://[::1/redeem", "https://localhost:3000/redeem", "/redeem#x", "http://u@localhost:3000/redeem", "http://:p@localhost:3000/redeem", { href: "/redeem" }]) {
      expect(parse({ redeem_url: redeemUrl }), JSON.stringify(redeemUrl)).toEqual(refused);
    }
  });
});

describe("statuses", () => {
  const row = (status: string, expiresAt: number, deletedAt: Date | null = null) => ({ status, expiresAt: new Date(expiresAt), deletedAt });

  it("a pending request is expired from the very millisecond of its expiry", () => {
    expect(statusOf(row("pending", 1000), 999)).toBe("pending");
    expect(statusOf(row("pending", 1000), 1000)).toBe("expired");
    expect(statusOf(row("redeemed", 1000), 2000)).toBe("redeemed");
    expect(statusOf(row("declined", 1000), 0)).toBe("declined");
    expect(endedReason(row("pending", 1000), 999)).toBeNull();
    expect(endedReason(row("pending", 1000), 1000)).toBe("this request has expired");
    expect(endedReason(row("pending", 1000, new Date()), 0)).toBe("this request was deleted");
    expect(endedReason(row("redeemed", 1000, new Date()), 0)).toBe("this request has already been redeemed");
    expect(endedReason(row("declined", 1000, new Date()), 0)).toBe("this request was declined");
  });

  it("its token answers 200 until its expiry and 410 from then on", async () => {
    const [owner, requester] = await Promise.all([passwordSession(), makeUser()]);
    const bundle = await createBundle({ ownerId: owner.user.id, name: "Exact" });
    const token = randomSecret();
    const at = nowMs();
    const created = await write((tx) =>
      tx.permissionRequest.create({
        data: {
          tokenDigest: digest(token), bundleId: bundle.id, userAllowedId: requester.id, userTargetId: owner.user.id, requestedById: requester.id,
          redeemUrl: `${BASE}/redeem`, ttl: 60, status: "pending", pendingKey: null, createdAt: new Date(at), expiresAt: new Date(at + 60_000),
        },
      }),
    );
    // The clock keeps running between the steps, so the first look is a second early, the second right at expiry.
    advanceClock(created.expiresAt.getTime() - nowMs() - 1_000);
    expect((await call("GET", `${LIST}${token}/`, { token: owner.accessToken })).status).toBe(200);
    advanceClock(created.expiresAt.getTime() - nowMs());
    const check = await call("GET", `${LIST}${token}/`, { token: owner.accessToken });
    expect({ status: check.status, body: check.json }).toEqual({ status: 410, body: { error: "this request has expired" } });
  });
});

describe("the list", () => {
  it("orders requests made in the same millisecond by id, newest first", async () => {
    const [owner, requester] = await Promise.all([passwordSession(), makeUser()]);
    const bundle = await createBundle({ ownerId: owner.user.id, name: "Same time" });
    const at = new Date(nowMs());
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) {
      const row = await write((tx) =>
        tx.permissionRequest.create({
          data: {
            tokenDigest: digest(randomSecret()), bundleId: bundle.id, userAllowedId: requester.id, userTargetId: owner.user.id, requestedById: requester.id,
            redeemUrl: `${BASE}/redeem`, ttl: 60, status: "pending", pendingKey: null, createdAt: at, expiresAt: new Date(at.getTime() + 60_000),
          },
        }),
      );
      ids.push(row.id);
    }
    const listed = await call("GET", LIST, { token: owner.accessToken });
    expect((listed.json.objects as { id: number }[]).map((o) => o.id)).toEqual([...ids].reverse());
    expect(listed.json.meta).toEqual({ limit: 20, offset: 0, total_count: 3, next: null, previous: null });
  });

  it("orders by creation time before id: a request dated earlier comes after a newer one, whatever its id", async () => {
    const [owner, requester] = await Promise.all([passwordSession(), makeUser()]);
    const bundle = await createBundle({ ownerId: owner.user.id, name: "Dated" });
    const at = nowMs();
    const made = async (createdAt: number) =>
      (
        await write((tx) =>
          tx.permissionRequest.create({
            data: {
              tokenDigest: digest(randomSecret()), bundleId: bundle.id, userAllowedId: requester.id, userTargetId: owner.user.id, requestedById: requester.id,
              redeemUrl: `${BASE}/redeem`, ttl: 7200, status: "pending", pendingKey: null, createdAt: new Date(createdAt), expiresAt: new Date(createdAt + 7200_000),
            },
          }),
        )
      ).id;
    const newer = await made(at);
    const older = await made(at - 3600_000); // written second (the larger id), but an hour older
    expect(older).toBeGreaterThan(newer);
    const listed = await call("GET", LIST, { token: owner.accessToken });
    expect({ status: listed.status, ids: (listed.json.objects as { id: number }[]).map((o) => o.id) }).toEqual({ status: 200, ids: [newer, older] });
  });
});
