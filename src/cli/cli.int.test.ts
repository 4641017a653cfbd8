// The admin CLI as an operator runs it: a real child process against the test database (it inherits
// DATABASE_URL), JSON on stdout, one error line on stderr, exit codes 0/1/2. The prune rules themselves are
// tested in-process in src/maintenance/prune-tokens.int.test.ts.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { endBrowserSessionInTx } from "@/browser-sessions/session-clients";
import { describe, expect, it, vi } from "vitest";
import { nowMs } from "@/clock";
import { listMail } from "@/email/list-mail";
import { digest } from "@/secrets";
import { db, write } from "@/db/client";
import { call } from "@/testing/app";
import { runCli } from "@/testing/cli";
import { makeClient, makeUser, passwordSession, uniqueEmail } from "@/testing/factories";
import { verifyPassword } from "@/users/passwords";

const cli = runCli;
// Most tests start the CLI several times, each a new Node process loading tsx: on a loaded machine (2 cores
// shared by several suites) one start can take 10 s, so the file allows each test two minutes.
vi.setConfig({ testTimeout: 120_000 });

/** Runs a --json command that must succeed, and returns its one JSON value. */
async function cliJson(...args: string[]): Promise<unknown> {
  const run = await cli(...args, "--json");
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout);
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(nowMs() - ms);
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe("user:create", () => {
  it("creates a user and prints {id, resource_uri, email, name}", async () => {
    const email = uniqueEmail("cli");
    const out = (await cliJson("user:create", "--email", email.toUpperCase(), "--password", "long enough pw", "--name", "Ada L")) as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(["id", "resource_uri", "email", "name"]);
    expect(out).toEqual({ id: expect.any(Number), resource_uri: `/api/user/${out.id}/`, email, name: "Ada L" });
    const row = await (await db()).user.findUniqueOrThrow({ where: { id: out.id as number } });
    expect(row.email).toBe(email);
    expect(await verifyPassword(row.passwordHash, "long enough pw")).toBe(true);
  });

  it("refuses a registered e-mail with one error line and exit 1, printing nothing on stdout", async () => {
    const user = await makeUser();
    const run = await cli("user:create", "--email", user.email.toUpperCase(), "--password", "another password", "--json");
    expect(run).toEqual({ code: 1, stdout: "", stderr: "error: email: already registered\n" });
  });

  it("is a usage error (exit 2) when a required option is missing, and creates nothing", async () => {
    const email = uniqueEmail("cli");
    const run = await cli("user:create", "--email", email, "--json");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^error: --password is required\n\nUsage: .*user:create --email E --password P/);
    expect(await (await db()).user.findUnique({ where: { email } })).toBeNull();
  });
});

describe("client:create", () => {
  it("registers a client of each grant type; a public one has no secret", async () => {
    const owner = await makeUser();
    const [code, native, implicit] = (await Promise.all([
      cliJson("client:create", "--owner", owner.email.toUpperCase(), "--name", "Web app", "--grant", "authorization_code",
        "--redirect-uri", "https://app.example.test/cb", "--redirect-uri", "http://localhost:8000/cb", "--first-party"),
      cliJson("client:create", "--owner", owner.email, "--name", "Native app", "--grant", "authorization_code",
        "--redirect-uri", "http://127.0.0.1/cb", "--public"),
      cliJson("client:create", "--owner", owner.email, "--name", "Browser app", "--grant", "implicit",
        "--redirect-uri", "https://spa.example.test/cb"),
    ])) as Record<string, unknown>[];
    const ownerRepr = { id: owner.id, resource_uri: `/api/user/${owner.id}/`, name: owner.name, email: owner.email };

    expect(code).toEqual({
      client_id: expect.any(String),
      client_secret: expect.stringMatching(/^[\w-]{43}$/),
      name: "Web app",
      owner: ownerRepr,
      grant_type: "authorization_code",
      redirect_uris: ["https://app.example.test/cb", "http://localhost:8000/cb"],
      post_logout_redirect_uris: [],
      backchannel_logout_uri: null,
      token_endpoint_auth_method: "client_secret_basic",
      public: false,
      first_party: true,
      require_pushed_authorization_requests: false,
      created_at: expect.stringMatching(ISO),
    });
    expect(native).toEqual({ ...code, client_id: native!.client_id, client_secret: null, name: "Native app",
      redirect_uris: ["http://127.0.0.1/cb"], token_endpoint_auth_method: "none", public: true, first_party: false, created_at: native!.created_at });
    expect(implicit).toMatchObject({ name: "Browser app", grant_type: "implicit", client_secret: expect.any(String), public: false, first_party: false });

    const rows = await (await db()).client.findMany({ where: { ownerId: owner.id }, orderBy: { id: "asc" } });
    const byId = new Map(rows.map((row) => [row.clientId, row]));
    expect(byId.get(code!.client_id as string)?.secretDigest).toBe(digest(code!.client_secret as string));
    expect(byId.get(code!.client_id as string)?.firstParty).toBe(true);
    expect(byId.get(native!.client_id as string)?.secretDigest).toBeNull();
    expect(byId.get(implicit!.client_id as string)?.secretDigest).toBe(digest(implicit!.client_secret as string));
  });

  it("registers client_credentials and device_code clients: no redirect URIs; a device client may be public", async () => {
    const owner = await makeUser();
    const [service, device, publicService] = await Promise.all([
      cli("client:create", "--owner", owner.email, "--name", "Nightly job", "--grant", "client_credentials", "--json"),
      cli("client:create", "--owner", owner.email, "--name", "TV app", "--grant", "device_code", "--public", "--json"),
      cli("client:create", "--owner", owner.email, "--name", "Leaky job", "--grant", "client_credentials", "--public", "--json"),
    ]);
    expect(JSON.parse(service.stdout)).toMatchObject({ grant_type: "client_credentials", client_secret: expect.stringMatching(/^[\w-]{43}$/), redirect_uris: [], public: false });
    expect(JSON.parse(device.stdout)).toMatchObject({ grant_type: "device_code", client_secret: null, redirect_uris: [], public: true });
    expect(publicService).toEqual({ code: 1, stdout: "", stderr: "error: public: a client_credentials client must keep a secret\n" });
  });

  it("prints a password client for people, with the secret shown once and stored as its digest", async () => {
    const owner = await makeUser();
    const run = await cli("client:create", "--owner", owner.email, "--name", "Script", "--grant", "password");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.stdout).toMatch(new RegExp(`^Created password client "Script" owned by ${owner.email.replace(/\./g, "\\.")}\n`));
    const clientId = /client_id +(\S+)/.exec(run.stdout)?.[1];
    const secret = /client_secret +(\S+)/.exec(run.stdout)?.[1];
    const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: clientId! } });
    expect(row).toMatchObject({ ownerId: owner.id, grantType: "password", isPublic: false, secretDigest: digest(secret!) });
  });

  it("registers post-logout redirect URIs and a back-channel logout URI (docs/rules/openid-connect.md#logout), checked as redirect URIs", async () => {
    const owner = await makeUser();
    const [registered, insecure, wrongGrant] = await Promise.all([
      cli("client:create", "--owner", owner.email, "--name", "Logout app", "--grant", "authorization_code", "--redirect-uri", "https://app.example.test/cb",
        "--post-logout-redirect-uri", "https://app.example.test/bye", "--post-logout-redirect-uri", "http://127.0.0.1:9000/bye",
        "--backchannel-logout-uri", "https://app.example.test/backchannel", "--json"),
      cli("client:create", "--owner", owner.email, "--name", "Insecure", "--grant", "authorization_code", "--redirect-uri", "https://app.example.test/cb",
        "--backchannel-logout-uri", "http://app.example.test/backchannel", "--json"),
      cli("client:create", "--owner", owner.email, "--name", "Job", "--grant", "client_credentials", "--post-logout-redirect-uri", "https://app.example.test/bye", "--json"),
    ]);
    expect(JSON.parse(registered.stdout)).toMatchObject({
      post_logout_redirect_uris: ["https://app.example.test/bye", "http://127.0.0.1:9000/bye"],
      backchannel_logout_uri: "https://app.example.test/backchannel",
    });
    expect(insecure.code).toBe(1);
    expect(insecure.stderr).toMatch(/^error: backchannel_logout_uri: must use https/);
    expect(wrongGrant).toEqual({ code: 1, stdout: "", stderr: "error: post_logout_redirect_uris: a client_credentials client has none\n" });
  });

  it("refuses a redirect URI that is neither https nor loopback, and an unknown owner", async () => {
    const owner = await makeUser();
    const [evil, unknown] = await Promise.all([
      cli("client:create", "--owner", owner.email, "--name", "Evil", "--grant", "authorization_code", "--redirect-uri", "http://evil.example/cb", "--json"),
      cli("client:create", "--owner", uniqueEmail("nobody"), "--name", "Orphan", "--grant", "password", "--json"),
    ]);
    expect(evil.code).toBe(1);
    expect(evil.stdout).toBe("");
    expect(evil.stderr).toMatch(/^error: redirect_uris\.0: must use https[^\n]*\n$/);
    expect(unknown).toEqual({ code: 1, stdout: "", stderr: "error: owner: no user with that e-mail\n" });
    expect(await (await db()).client.count({ where: { ownerId: owner.id } })).toBe(0);
  });
});

describe("bundle:create", () => {
  it("creates a bundle for the owner and prints its representation", async () => {
    const owner = await makeUser();
    const out = (await cliJson("bundle:create", "--owner", owner.email, "--name", "Holiday photos")) as Record<string, unknown>;
    expect(out).toEqual({
      id: expect.any(Number),
      resource_uri: `/api/bundle/${out.id}/`,
      name: "Holiday photos",
      owner: { id: owner.id, resource_uri: `/api/user/${owner.id}/`, name: owner.name, email: owner.email },
      created_at: expect.stringMatching(ISO),
    });
    const row = await (await db()).bundle.findUniqueOrThrow({ where: { id: out.id as number } });
    expect(row).toMatchObject({ ownerId: owner.id, name: "Holiday photos" });
  });
});

describe("mail:list", () => {
  async function insertMail(to: string, subject: string, createdAt: Date, status = "pending") {
    await write((tx) =>
      tx.mailMessage.create({ data: { to, subject, text: `text of ${subject}`, html: `<p>${subject}</p>`, status, createdAt } }),
    );
  }

  it("lists the outbox newest first, and only one recipient's mail with --to", async () => {
    const bob = uniqueEmail("bob");
    const carol = uniqueEmail("carol");
    const at = (minutesAgo: number) => new Date(Math.floor(nowMs() / 1000) * 1000 - minutesAgo * MINUTE);
    const [t1, t2, t3, t4] = [at(4), at(3), at(2), at(1)];
    // Inserted out of order, so that the order comes from created_at and not from the ids.
    await insertMail(bob, "first", t1!, "sent");
    await insertMail(bob, "third", t4!, "failed");
    await insertMail(carol, "for carol", t2!);
    await insertMail(bob, "second", t3!);

    const out = await cliJson("mail:list", "--to", bob.toUpperCase());
    const row = (subject: string, createdAt: Date, status: string) =>
      ({ to: bob, subject, text: `text of ${subject}`, html: `<p>${subject}</p>`, status, created_at: createdAt.toISOString() });
    expect(out).toEqual([row("third", t4!, "failed"), row("second", t3!, "pending"), row("first", t1!, "sent")]);

    const all = await listMail();
    expect(all.filter((m) => m.to === bob || m.to === carol).map((m) => m.subject)).toEqual(["third", "second", "for carol", "first"]);
    const times = all.map((m) => Date.parse(m.created_at));
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });
});

describe("tokens:prune", () => {
  it("removes an expired access token but keeps a used refresh token, whose reuse still revokes the grant", async () => {
    const session = await passwordSession();
    const refreshed = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "refresh_token", refresh_token: session.refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret },
    });
    expect(refreshed.status).toBe(200);
    await write((tx) => tx.accessToken.update({ where: { digest: digest(session.accessToken) }, data: { expiresAt: ago(2 * DAY) } }));

    const out = (await cliJson("tokens:prune")) as Record<string, number>;
    expect(Object.keys(out)).toEqual(["access_tokens", "refresh_tokens", "authorization_codes", "grants", "failed_attempts", "permission_requests", "device_authorizations", "account_tokens", "mail_messages", "dpop_proofs", "client_assertions", "session_clients", "logout_deliveries", "pushed_requests", "registration_tokens", "audit_events"]);
    for (const count of Object.values(out)) expect(Number.isInteger(count) && count >= 0).toBe(true);
    expect(out.access_tokens).toBeGreaterThanOrEqual(1);

    const client = await db();
    expect(await client.accessToken.findUnique({ where: { digest: digest(session.accessToken) } })).toBeNull();
    const used = await client.refreshToken.findUnique({ where: { digest: digest(session.refreshToken) } });
    expect(used?.usedAt).not.toBeNull();

    const reuse = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "refresh_token", refresh_token: session.refreshToken, client_id: session.client.client_id, client_secret: session.client.client_secret },
    });
    expect(reuse.status).toBe(400);
    expect(reuse.json).toEqual({ error: "invalid_grant" });
    const newToken = await client.accessToken.findUnique({ where: { digest: digest(refreshed.json.access_token as string) } });
    expect(newToken?.revokedAt).not.toBeNull();
  });
});

describe("logout:deliver", () => {
  it("delivers the queued logout tokens that are due to their receivers (docs/rules/openid-connect.md#back-channel-logout)", async () => {
    const bodies: string[] = [];
    const receiver = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        bodies.push(body);
        response.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
    try {
      const owner = await makeUser();
      const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", backchannelLogoutUri: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/bc` });
      const row = await (await db()).client.findUniqueOrThrow({ where: { clientId: client.client_id } });
      const sid = `cli-${randomBytes(6).toString("hex")}`;
      await write((tx) => tx.sessionClient.create({ data: { sid, userId: owner.id, clientId: row.id } }));
      const [queued] = await write((tx) => endBrowserSessionInTx(tx, sid));
      const run = await cli("logout:deliver", "--json");
      expect(run.code).toBe(0);
      // (Other test files may have queued tokens of their own: only this one is counted on.)
      expect(JSON.parse(run.stdout)).toMatchObject({ sent: expect.any(Number), failed: expect.any(Number), pending: expect.any(Number) });
      expect(JSON.parse(run.stdout).sent).toBeGreaterThanOrEqual(1);
      expect(bodies).toHaveLength(1);
      expect(bodies[0]).toMatch(/^logout_token=[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(await (await db()).logoutDelivery.findUniqueOrThrow({ where: { id: queued! } })).toMatchObject({ status: "sent", attempts: 1 });
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});

describe("the command line", () => {
  it("--help lists every command and exits 0", async () => {
    const run = await cli("--help");
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    for (const command of ["user:create", "client:create", "bundle:create", "mail:list", "mail:deliver", "logout:deliver", "keys:rotate", "keys:revoke", "tokens:prune"]) {
      expect(run.stdout).toContain(command);
    }
  });

  it("an unknown command is a usage error: exit 2, the usage on stderr, nothing on stdout", async () => {
    const run = await cli("mail:frobnicate", "--json");
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^error: unknown command "mail:frobnicate"\n\nUsage: /);
    expect(run.stderr).toContain("tokens:prune");
  });
});
