// Development seed (docs/api.md): on an empty database, the demo data every example of the README and
// docs/api.md uses: three users (alice owns the clients and a bundle; bob asks her for access; carol is the
// one let in), one client of each grant type for alice, a first-party client (the only kind that may redeem a
// permission token by API, docs/rules/permission-requests.md#redeeming) and a password client of bob's (the
// password grant is for a client's owner only, docs/rules/tokens.md#password-grant). Secrets are stored only
// as digests, so the credentials are written once to a file of shell variables (.data/demo.env, mode 600,
// beside the generated AUTH_SECRET) that those examples `source` and that `npm run dev` prints again on every
// start. The file belongs to its database (docs/rules/operations.md#the-demo-file): a development server on
// another SQLite file (a test's) keeps its own beside that file, so that nothing but the development
// database's seed ever writes .data/demo.env; and the address it names (DEMO_URL) and prints is the one the
// server runs on (PORT, APP_URL), refreshed on every start. Never runs in production.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { createBundle } from "@/bundles/create-bundle";
import { createClient } from "@/clients/create-client";
import { DEFAULT_DATABASE_URL, env } from "@/env";
import { db } from "@/db/client";
import { createUser } from "@/users/create-user";

export const DEMO_REDIRECT_URI = "http://localhost:8000/callback";
/** The server scripts/example-client.ts talks to unless given --server. */
const EXAMPLE_CLIENT_SERVER = "http://localhost:3000";
export const DEMO_FILE = ".data/demo.env";

/**
 * Where the demo credentials of the configured database are kept: .data/demo.env for the development
 * database (and for PostgreSQL), else `<name>.demo.env` beside the SQLite file.
 */
export function demoFileFor(config = env()): string {
  const development = resolve(DEFAULT_DATABASE_URL.slice("file:".length));
  if (config.database.kind !== "sqlite" || config.database.file === development) return DEMO_FILE;
  return join(dirname(config.database.file), `${basename(config.database.file).replace(/\.db$/, "")}.demo.env`);
}

/** The variables of the demo file, in the order they are written. */
type Demo = Record<(typeof NAMES)[number], string>;
const NAMES = [
  "DEMO_DATABASE",
  "ALICE_PASSWORD",
  "BOB_PASSWORD",
  "CAROL_PASSWORD",
  "CODE_CLIENT_ID",
  "CODE_CLIENT_SECRET",
  "IMPLICIT_CLIENT_ID",
  "IMPLICIT_CLIENT_SECRET",
  "PASSWORD_CLIENT_ID",
  "PASSWORD_CLIENT_SECRET",
  "FIRST_PARTY_CLIENT_ID",
  "FIRST_PARTY_CLIENT_SECRET",
  "BOB_CLIENT_ID",
  "BOB_CLIENT_SECRET",
  "SERVICE_CLIENT_ID",
  "SERVICE_CLIENT_SECRET",
  "DEVICE_CLIENT_ID",
] as const;
/** Written since the address was added; a file of an earlier seed may lack it. */
const OPTIONAL: readonly string[] = ["DEMO_URL"];
type Saved = Demo & { DEMO_URL?: string };

/** Seeds an empty database and writes the demo file; null when the database already has users. */
export async function seedIfEmpty(file = demoFileFor()): Promise<string | null> {
  if ((await (await db()).user.count()) > 0) return null;
  const password = () => randomBytes(9).toString("base64url");
  const demo = { DEMO_DATABASE: env().databaseUrl, ALICE_PASSWORD: password(), BOB_PASSWORD: password(), CAROL_PASSWORD: password() } as Partial<Demo>;
  const alice = await createUser({ email: "alice@example.com", password: demo.ALICE_PASSWORD!, name: "Alice Demo" });
  const bob = await createUser({ email: "bob@example.com", password: demo.BOB_PASSWORD!, name: "Bob Demo" });
  await createUser({ email: "carol@example.com", password: demo.CAROL_PASSWORD!, name: "Carol Demo" });
  const owned = { ownerId: alice.id };
  const code = await createClient({ ...owned, name: "Demo web app (authorization code)", grantType: "authorization_code", redirectUris: [DEMO_REDIRECT_URI] });
  const implicit = await createClient({ ...owned, name: "Demo browser app (implicit)", grantType: "implicit", redirectUris: [DEMO_REDIRECT_URI] });
  const pw = await createClient({ ...owned, name: "Demo script (password)", grantType: "password" });
  const firstParty = await createClient({ ...owned, name: "Demo first-party app (password)", grantType: "password", firstParty: true });
  const bobs = await createClient({ ownerId: bob.id, name: "Bob's script (password)", grantType: "password" });
  const service = await createClient({ ...owned, name: "Demo server (client credentials)", grantType: "client_credentials" });
  const device = await createClient({ ...owned, name: "Demo TV (device)", grantType: "device_code", isPublic: true });
  await createBundle({ ownerId: alice.id, name: "Alice's photos" });
  Object.assign(demo, {
    CODE_CLIENT_ID: code.client_id,
    CODE_CLIENT_SECRET: code.client_secret!,
    IMPLICIT_CLIENT_ID: implicit.client_id,
    IMPLICIT_CLIENT_SECRET: implicit.client_secret!,
    PASSWORD_CLIENT_ID: pw.client_id,
    PASSWORD_CLIENT_SECRET: pw.client_secret!,
    FIRST_PARTY_CLIENT_ID: firstParty.client_id,
    FIRST_PARTY_CLIENT_SECRET: firstParty.client_secret!,
    BOB_CLIENT_ID: bobs.client_id,
    BOB_CLIENT_SECRET: bobs.client_secret!,
    SERVICE_CLIENT_ID: service.client_id,
    SERVICE_CLIENT_SECRET: service.client_secret!,
    DEVICE_CLIENT_ID: device.client_id,
  });
  writeDemoFile(file, demo as Demo);
  return describe(demo as Demo, file, "Demo data created");
}

/**
 * On a later start: the demo credentials again, if the demo file belongs to this database, with the address
 * this start serves on (the file's DEMO_URL is rewritten when the port or APP_URL changed).
 */
export function demoCredentials(file = demoFileFor()): string | null {
  const path = resolve(file);
  if (!existsSync(path)) return null;
  const demo: Partial<Saved> = {};
  for (const line of readFileSync(path, "utf8").split("\n")) {
    const match = /^([A-Z_]+)='([^']*)'$/.exec(line);
    if (match && [...NAMES, ...OPTIONAL].includes(match[1]!)) demo[match[1] as keyof Saved] = match[2]!;
  }
  if (demo.DEMO_DATABASE !== env().databaseUrl || NAMES.some((name) => demo[name] === undefined)) return null;
  if (demo.DEMO_URL !== env().appUrl) writeDemoFile(file, demo as Demo);
  return describe(demo as Demo, file, "Demo data (as seeded; passwords changed since are not shown)");
}

function writeDemoFile(file: string, demo: Demo): void {
  const path = resolve(file);
  mkdirSync(dirname(path), { recursive: true });
  const lines = [...NAMES.map((name) => `${name}='${demo[name]}'`), `DEMO_URL='${env().appUrl}'`];
  const header = "# The development seed's demo credentials (npm run dev). `source .data/demo.env` for the examples of README.md and docs/api.md.";
  writeFileSync(path, [header, ...lines, ""].join("\n"), { mode: 0o600 });
  chmodSync(path, 0o600);
}

function describe(demo: Demo, file: string, title: string): string {
  const base = env().appUrl;
  return [
    `${title}, for ${base}; saved in ${file} (\`source ${file}\` for the examples of README.md and docs/api.md):`,
    `  user    alice@example.com  password ${demo.ALICE_PASSWORD}   (owns the clients and the bundle /api/bundle/1/)`,
    `  user    bob@example.com    password ${demo.BOB_PASSWORD}`,
    `  user    carol@example.com  password ${demo.CAROL_PASSWORD}`,
    `  client  authorization_code client_id ${demo.CODE_CLIENT_ID}  client_secret ${demo.CODE_CLIENT_SECRET}  redirect_uri ${DEMO_REDIRECT_URI}`,
    `  client  implicit           client_id ${demo.IMPLICIT_CLIENT_ID}  client_secret ${demo.IMPLICIT_CLIENT_SECRET}  redirect_uri ${DEMO_REDIRECT_URI}`,
    `  client  password           client_id ${demo.PASSWORD_CLIENT_ID}  client_secret ${demo.PASSWORD_CLIENT_SECRET}`,
    `  client  password, first-party  client_id ${demo.FIRST_PARTY_CLIENT_ID}  client_secret ${demo.FIRST_PARTY_CLIENT_SECRET}`,
    `  client  password (bob's)   client_id ${demo.BOB_CLIENT_ID}  client_secret ${demo.BOB_CLIENT_SECRET}`,
    `  client  client_credentials client_id ${demo.SERVICE_CLIENT_ID}  client_secret ${demo.SERVICE_CLIENT_SECRET}`,
    `  client  device_code        client_id ${demo.DEVICE_CLIENT_ID}  (public: no secret)`,
    "",
    "  Try the authorization code flow in a browser with the example client (docs/api.md, \"A round trip in a browser\"):",
    `  npm run example-client -- --client-id=${demo.CODE_CLIENT_ID} --client-secret=${demo.CODE_CLIENT_SECRET}${base === EXAMPLE_CLIENT_SERVER ? "" : ` --server=${base}`}`,
    "",
    "  Try the password grant:",
    `  curl -s ${base}/api/connect/oauth2/token/ -u '${demo.PASSWORD_CLIENT_ID}:${demo.PASSWORD_CLIENT_SECRET}' \\`,
    `    -d grant_type=password -d username=alice@example.com -d password='${demo.ALICE_PASSWORD}' -d scope='readonly readwrite'`,
    "",
    "  Try the device flow (then open verification_uri_complete, approve, and poll as docs/api.md shows):",
    `  curl -s ${base}/api/connect/oauth2/device/ -d client_id=${demo.DEVICE_CLIENT_ID} -d scope=readonly`,
  ].join("\n");
}
