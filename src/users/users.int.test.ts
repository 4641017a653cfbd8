// Users (docs/rules/permission-requests.md#users): unique e-mails compared lower-case, a display name,
// references to users in request bodies (URI, e-mail or id), GET /api/user/<id>/ for any id-looking key, and
// sign-in's handling of the e-mail it is given. In-process, so that what the CLI tests show from outside is
// also measured here.
import { describe, expect, it } from "vitest";
import { ApiError } from "@/http/errors";
import { parseInput } from "@/http/validate";
import { db } from "@/db/client";
import { call } from "@/testing/app";
import { refuseInserts } from "@/testing/faults";
import { makeUser, passwordSession, uniqueEmail } from "@/testing/factories";
import { createUser } from "@/users/create-user";
import { verifyPassword } from "@/users/passwords";
import { signInWithPassword } from "@/users/sign-in";
import { findUserByReference, parseUserReference, USER_REFERENCE_MESSAGE, ZUserReference } from "@/users/user-reference";
import { z } from "zod";

const failure = async (promise: Promise<unknown>) =>
  promise.then(
    () => null,
    (error: unknown) => (error instanceof ApiError ? { status: error.status, error: error.error } : error),
  );

describe("createUser", () => {
  it("stores the e-mail lower-case, trimmed, and names the user after the e-mail's local part when no name is given", async () => {
    const email = uniqueEmail("Named");
    const user = await createUser({ email: `  ${email.toUpperCase()} `, password: "long enough" });
    expect({ email: user.email, name: user.name }).toEqual({ email: email.toLowerCase(), name: email.split("@")[0]!.toLowerCase() });
  });

  it("refuses an e-mail already registered, in any case, with 409", async () => {
    const user = await makeUser();
    expect(await failure(createUser({ email: user.email.toUpperCase(), password: "another password" }))).toEqual({ status: 409, error: "email: already registered" });
  });

  it("reports a database failure other than a taken e-mail as that failure, not as 409, and creates nobody", async () => {
    const email = uniqueEmail("refused").toLowerCase();
    const undo = await refuseInserts("User", "email", email);
    const error = await createUser({ email, password: "long enough" }).then(
      () => null,
      (caught: unknown) => caught,
    );
    await undo();
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(ApiError);
    expect(String(error)).not.toContain("already registered");
    expect(await (await db()).user.findUnique({ where: { email } })).toBeNull();
  });

  it.each([
    [{ email: "not an address", password: "long enough" }, "email: must be an e-mail address"],
    [{ email: 42, password: "long enough" }, "email: must be a string"],
    [{ email: `${"a".repeat(250)}@x.test`, password: "long enough" }, "email: must be at most 254 characters"],
    [{ email: "ok@example.test", password: "short" }, "password: must be at least 8 characters"],
    [{ email: "ok@example.test", password: "x".repeat(257) }, "password: must be at most 256 characters"],
    [{ email: "ok@example.test", password: 12345678 }, "password: must be a string"],
    [{ email: "ok@example.test", password: "long enough", name: "   " }, "name: must not be empty"],
    [{ email: "ok@example.test", password: "long enough", name: "n".repeat(101) }, "name: must be at most 100 characters"],
    [{ email: "ok@example.test", password: "long enough", name: 7 }, "name: must be a string"],
  ])("refuses %j with 400 %j", async (input, error) => {
    expect(await failure(createUser(input as never))).toEqual({ status: 400, error });
  });
});

describe("verifyPassword", () => {
  it("is false, not an error, for a stored value that is not a hash", async () => {
    expect(await verifyPassword("not-a-hash", "whatever")).toBe(false);
    expect(await verifyPassword("$argon2id$v=19$broken", "whatever")).toBe(false);
  });
});

describe("GET /api/user/<id>/", () => {
  it.each(["1abc", "abc1", "1 ", "0x1", "1234567890123", "1.0"])("answers 404 for the key %j, which is not an id", async (key) => {
    const { accessToken } = await passwordSession("readonly");
    const res = await call("GET", `/api/user/${encodeURIComponent(key)}/`, { token: accessToken });
    expect({ status: res.status, body: res.json }).toEqual({ status: 404, body: { error: "no such user" } });
  });
});

describe("user references", () => {
  it("reads a URI, an e-mail in any case, or an id", () => {
    expect(parseUserReference("/api/user/12/")).toEqual({ id: 12 });
    expect(parseUserReference(12)).toEqual({ id: 12 });
    expect(parseUserReference(" 12 ")).toEqual({ id: 12 });
    expect(parseUserReference("Someone@Example.TEST")).toEqual({ email: "someone@example.test" });
    expect(parseUserReference("not an e-mail@")).toBeNull();
    expect(parseUserReference("/api/bundle/12/")).toBeNull();
  });

  it.each([
    [undefined, "is required"],
    [null, "is required"],
    ["", "is required"],
    ["bad@", USER_REFERENCE_MESSAGE],
    [false, USER_REFERENCE_MESSAGE],
    [{}, USER_REFERENCE_MESSAGE],
  ])("a missing or malformed reference %j is the 400 %j", (value, message) => {
    expect(USER_REFERENCE_MESSAGE).toBe("must be a user URI (/api/user/<id>/), e-mail or id");
    let error: unknown = null;
    try {
      parseInput(z.object({ who: ZUserReference }), value === undefined ? {} : { who: value });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ApiError);
    expect({ status: (error as ApiError).status, error: (error as ApiError).error }).toEqual({ status: 400, error: `who: ${message}` });
  });

  it("finds the user a reference names, by id or by e-mail, and nobody for an unknown one", async () => {
    const user = await makeUser();
    expect((await findUserByReference({ id: user.id }))?.email).toBe(user.email);
    expect((await findUserByReference({ email: user.email }))?.id).toBe(user.id);
    expect(await findUserByReference({ id: 999_999_999 })).toBeNull();
    expect(await findUserByReference({ email: uniqueEmail("nobody") })).toBeNull();
  });
});

describe("sign-in", () => {
  it("takes the e-mail trimmed and in any case", async () => {
    const user = await makeUser();
    const result = await signInWithPassword({ email: `  ${user.email.toUpperCase()}  `, password: user.password, ip: "203.0.113.10" });
    expect(result).toEqual({ ok: true, user: { id: user.id, name: user.name, email: user.email, sessionVersion: 0 } });
  });

  it("counts failures per e-mail: another person's failures do not lock this one out", async () => {
    const [locked, other] = await Promise.all([makeUser(), makeUser()]);
    for (let i = 0; i < 10; i++) await signInWithPassword({ email: locked.email, password: `wrong ${i}`, ip: "203.0.113.10" });
    expect(await signInWithPassword({ email: `  ${locked.email.toUpperCase()}`, password: locked.password, ip: "203.0.113.10" })).toMatchObject({ ok: false, reason: "rate_limited" });
    expect((await signInWithPassword({ email: other.email, password: other.password, ip: "203.0.113.10" })).ok).toBe(true);
  });

  it("refuses an empty e-mail", async () => {
    expect(await signInWithPassword({ email: "   ", password: "whatever", ip: "203.0.113.10" })).toEqual({ ok: false, reason: "invalid" });
  });
});
