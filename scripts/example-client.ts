// A small example client for the authorization code flow with PKCE, for trying the server by hand:
//
//   npm run example-client -- --client-id=<id> --client-secret=<secret>
//
// (Use the = form: generated ids and secrets may start with a dash.)
//
// It listens on http://localhost:8000/callback (the demo client's registered redirect URI), prints the
// authorization URL to open in a browser, and when the browser comes back with a code it exchanges the code
// at the token endpoint, calls GET /api/user/<id>/ with the access token, and prints both.
//
// With --no-exchange it stops before the exchange and prints the code and the PKCE verifier instead, so that
// the exchange can be done by hand (docs/api.md shows it with curl): a code works once, so a code this client
// has already spent would only be a replay.
import { createHash, randomBytes } from "node:crypto";
import { createServer } from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    "client-id": { type: "string" },
    "client-secret": { type: "string" },
    server: { type: "string", default: "http://localhost:3000" },
    port: { type: "string", default: "8000" },
    scope: { type: "string", default: "readonly readwrite" },
    "no-exchange": { type: "boolean", default: false },
  },
});
if (!values["client-id"]) {
  console.error("usage: npm run example-client -- --client-id=ID [--client-secret=SECRET] [--server URL] [--port 8000] [--scope S] [--no-exchange]");
  process.exit(2);
}
const server = values.server!.replace(/\/$/, "");
const redirectUri = `http://localhost:${values.port}/callback`;
const verifier = randomBytes(32).toString("base64url");
const state = randomBytes(16).toString("base64url");
const authorizeUrl = new URL(`${server}/api/connect/oauth2/auth/`);
authorizeUrl.search = new URLSearchParams({
  response_type: "code",
  client_id: values["client-id"],
  redirect_uri: redirectUri,
  scope: values.scope!,
  state,
  code_challenge: createHash("sha256").update(verifier).digest("base64url"),
  code_challenge_method: "S256",
}).toString();

const http = createServer(async (req, res) => {
  const url = new URL(req.url ?? "/", redirectUri);
  if (url.pathname !== "/callback") return void res.writeHead(404).end();
  const send = (status: number, text: string) => {
    res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" }).end(text);
    console.log(text);
    http.close();
  };
  if (url.searchParams.get("state") !== state) return send(400, "State mismatch: not the request this client made.");
  if (url.searchParams.get("iss") !== server) return send(400, `Unexpected issuer ${url.searchParams.get("iss")}`);
  const error = url.searchParams.get("error");
  if (error) return send(400, `The server answered error=${error}`);
  const code = url.searchParams.get("code");
  if (values["no-exchange"]) {
    return send(200, `Not exchanged (--no-exchange). Within 60 seconds, once:\n\n  CODE='${code}'\n  VERIFIER='${verifier}'\n`);
  }
  const token = await fetch(`${server}/api/connect/oauth2/token/`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      grant_type: "authorization_code",
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: values["client-id"],
      ...(values["client-secret"] ? { client_secret: values["client-secret"] } : {}),
    }),
  });
  const record = (await token.json()) as { access_token?: string; user?: string };
  if (!token.ok || !record.access_token) return send(502, `Token request failed (${token.status}): ${JSON.stringify(record)}`);
  const me = await fetch(`${server}${record.user}`, { headers: { Authorization: `Bearer ${record.access_token}` } });
  send(200, `Token record:\n${JSON.stringify(record, null, 2)}\n\nGET ${record.user}:\n${JSON.stringify(await me.json(), null, 2)}\n`);
});

http.listen(Number(values.port), () => {
  console.log(`Listening on ${redirectUri}. Open this URL in your browser, sign in and approve:\n\n  ${authorizeUrl}\n`);
});
