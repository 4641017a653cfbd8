// Web sign-in when password hashing is busy (docs/rules/accounts.md#password-hashing): the credentials
// provider refuses a sign-in whose password check the full hashing queue refused as "busy", never as a wrong
// password; the sign-in route answers it 503 with Retry-After: 1 (429 for a sign-in limit), and the page says
// to try again in a moment. The hashing threads are held (hashingThreadHooks, src/users/hashing-threads.ts)
// so that the admitted checks stay in their places.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { until } from "@/testing/until";
import { signInMessage } from "../../app/login/messages";
import { authOptions } from "@/auth/options";
import { answerSignIn, SIGN_IN_BUSY, SIGN_IN_RATE_LIMITED, withSignInStatus } from "@/auth/sign-in-status";
import { SIGNIN_LIMIT_PER_EMAIL_AND_ADDRESS } from "@/users/sign-in";
import { setEnvForTests, type Env } from "@/env";
import { hashingLoad } from "@/users/passwords";
import { makeUser, uniqueEmail } from "@/testing/factories";
import { hashingThreadHooks } from "@/users/hashing-threads";
import { Barrier } from "@/testing/race";

const QUEUE = 2;
const EXCESS = 3;

const slots = () => {
  const load = hashingLoad();
  return { pageSlots: load.pageSlots, busy: load.busy, waiting: load.waiting.api + load.waiting.pages, pages: load.waiting.pages };
};

type Authorize = (credentials: Record<string, string>, request: { headers: Record<string, string> }) => Promise<unknown>;
const authorize = (authOptions().providers[0] as unknown as { options: { authorize: Authorize } }).options.authorize;


let previous: Partial<Env>;
beforeEach(() => {
  previous = setEnvForTests({ hashQueue: QUEUE });
});
afterEach(() => {
  setEnvForTests(previous);
});

describe("web sign-in under a flood of sign-ins with random e-mails", () => {
  it("refuses the sign-ins beyond the hashing slots and the queue as busy at once; the admitted ones are checked as usual", async () => {
    const user = await makeUser();
    const headers = { "x-forwarded-for": "198.51.100.7" };
    expect(await authorize({ email: uniqueEmail("flood"), password: "guess" }, { headers })).toBeNull(); // everything loaded
    // The pages' hashes hold fewer places than there are threads: one thread is kept for the API
    // (src/users/passwords.ts).
    const size = slots().pageSlots;
    const burst = size + QUEUE + EXCESS;
    const pool = hashingThreadHooks.hold();
    const outcomes: Array<{ ok: unknown } | { error: string }> = [];
    try {
      const barrier = new Barrier(burst);
      const attempts = Array.from({ length: burst }, async (_, i) => {
        await barrier.arrive();
        try {
          const signedIn = await authorize({ email: uniqueEmail(`flood${i}`), password: "guess" }, { headers });
          outcomes.push({ ok: signedIn });
        } catch (error) {
          outcomes.push({ error: (error as Error).message });
        }
      });
      await until(
        () => slots().busy + slots().waiting + outcomes.length === burst,
        () => `busy ${slots().busy}, waiting ${slots().waiting}, answered ${outcomes.length} of ${burst}`,
      );
      expect(barrier.arrived).toBe(burst);
      expect({ busy: slots().busy, waiting: slots().pages }).toEqual({ busy: size, waiting: QUEUE }); // the pages' queue
      expect(outcomes).toEqual(Array.from({ length: EXCESS }, () => ({ error: SIGN_IN_BUSY })));
      pool.release();
      await Promise.all(attempts);
      const checked = outcomes.slice(EXCESS);
      expect(checked).toHaveLength(size + QUEUE);
      // Checked as usual: no such account (null, next-auth's CredentialsSignin).
      expect(checked).toEqual(Array.from({ length: size + QUEUE }, () => ({ ok: null })));
      // Once the flood has gone through, the owner signs in.
      expect(await authorize({ email: user.email, password: user.password }, { headers })).toMatchObject({ id: String(user.id) });
    } finally {
      pool.release();
    }
  });

  it("page: says to try again in a moment, not that the password is wrong", () => {
    expect(signInMessage(SIGN_IN_BUSY)).toBe("Too many sign-ins right now. Try again in a moment.");
    expect(signInMessage("CredentialsSignin")).toBe("That e-mail and password do not match an account.");
    expect(signInMessage("anything else")).toBe("Sign-in failed. Try again.");
    expect(signInMessage("toString")).toBe("Sign-in failed. Try again.");
    expect(signInMessage(null)).toBeNull();
  });
});

describe("the sign-in route's status for a refused sign-in", () => {
  const CALLBACK = "http://localhost:3000/api/auth/callback/credentials";
  // As next-auth's route answers the page's fetch (json=true): 401 and the reason in the URL.
  const refused = (reason: string) =>
    new Response(JSON.stringify({ url: `http://localhost:3000/api/auth/error?error=${reason}` }), {
      status: 401,
      headers: [
        ["content-type", "application/json"],
        ["set-cookie", "a=1; Path=/"],
        ["set-cookie", "b=2; Path=/"],
      ],
    });
  const post = (url = CALLBACK) => new Request(url, { method: "POST" });

  it("is 503 with Retry-After: 1 when hashing was busy, 429 for a sign-in limit; the body and cookies unchanged", async () => {
    const busy = await withSignInStatus(post(), refused(SIGN_IN_BUSY));
    expect({ status: busy.status, retryAfter: busy.headers.get("retry-after"), body: await busy.json() }).toEqual({
      status: 503,
      retryAfter: "1",
      body: { url: "http://localhost:3000/api/auth/error?error=busy" },
    });
    expect(busy.headers.getSetCookie()).toEqual(["a=1; Path=/", "b=2; Path=/"]);
    const limited = await withSignInStatus(post(), refused("rate_limited"));
    expect({ status: limited.status, retryAfter: limited.headers.get("retry-after") }).toEqual({ status: 429, retryAfter: null });
  });

  it("429 for a sign-in limit says in Retry-After when the limit has room again, as authorize() learnt it for this request", async () => {
    const user = await makeUser();
    const headers = { "x-forwarded-for": "198.51.100.8" };
    for (let i = 0; i < SIGNIN_LIMIT_PER_EMAIL_AND_ADDRESS.max; i++) expect(await authorize({ email: user.email, password: `wrong ${i}` }, { headers })).toBeNull();
    // As the route runs next-auth: authorize() inside, its refusal turned into next-auth's 401 answer.
    const limited = await answerSignIn(post(), async () => {
      await expect(authorize({ email: user.email, password: user.password }, { headers })).rejects.toThrow(SIGN_IN_RATE_LIMITED);
      return refused(SIGN_IN_RATE_LIMITED);
    });
    expect(limited.status).toBe(429);
    const seconds = Number(limited.headers.get("retry-after"));
    expect(seconds).toBeGreaterThan(SIGNIN_LIMIT_PER_EMAIL_AND_ADDRESS.windowMs / 1000 - 60);
    expect(seconds).toBeLessThanOrEqual(SIGNIN_LIMIT_PER_EMAIL_AND_ADDRESS.windowMs / 1000);
    // Another request's note is its own: a wrong password stays 401 without Retry-After.
    const other = await answerSignIn(post(), async () => refused("CredentialsSignin"));
    expect({ status: other.status, retryAfter: other.headers.get("retry-after") }).toEqual({ status: 401, retryAfter: null });
  });

  it("stays 401 for a wrong password, and leaves redirects and other routes alone", async () => {
    expect((await withSignInStatus(post(), refused("CredentialsSignin"))).status).toBe(401);
    expect((await withSignInStatus(post("http://localhost:3000/api/auth/signout"), refused(SIGN_IN_BUSY))).status).toBe(401);
    const redirect = new Response(null, { status: 302, headers: { location: "http://localhost:3000/api/auth/error?error=busy" } });
    expect((await withSignInStatus(post(), redirect)).status).toBe(302);
  });
});
