// The authorization endpoint, GET /api/connect/oauth2/auth/ (and POST with a form body, OpenID Connect Core
// 3.1.2.1: docs/rules/openid-connect.md#authorization-post)
// (docs/rules/specification.md#authorization-endpoint, docs/rules/tokens.md#authorization-endpoint; RFC 6749
// 4.1.1 and 4.2.1, RFC 7636, RFC 9207). A browser endpoint: its errors are an HTML page (unknown client,
// unregistered redirect URI: never a redirect) or a redirect to the client with the RFC 6749 error code.
// OpenID Connect Core 3.1.2.1 (docs/rules/openid-connect.md#authorization-parameters): `nonce`, `prompt`
// (none, login, consent) and `max_age`. `resource` must be this service's API (RFC 8707,
// docs/rules/tokens.md#resource-indicators; else invalid_target); a pushed request (RFC 9126 4) comes as
// client_id and request_uri only, its stored parameters standing in for the query (other query parameters are
// ignored) and used once; a client that requires PAR gets nothing without one; a registered `scope` bounds
// what a client may ask for (docs/rules/tokens.md#scopes-of-registered-clients). A client_id that is a URL names
// a client ID metadata document (docs/rules/tokens.md#client-id-metadata-documents).
// No unsigned front-channel parameter weakens a request (docs/rules/tokens.md#front-channel): whether the
// password must be typed again is decided from server state, the session's sign-in time against the time the
// request was received (a pushed request's row; for a plain one, the time this endpoint signed into the way
// back through the sign-in page, src/oauth/authorization-request.ts). prompt=login is met only by a sign-in
// made at or after that time, max_age only by a session no older than max_age, whatever else the URL carries.
import type { Client } from "@/generated/sqlite/client";
import { now, nowMs } from "@/clock";
import { env } from "@/env";
import { htmlErrorPage, redirect } from "@/http/html";
import { readFormParams } from "@/http/body";
import { controlCharacterField, controlCharacterMessage } from "@/http/input-text";
import { matchRedirectUri } from "@/clients/redirect-uri";
import { isPublicClient, redirectUrisOf } from "@/clients/represent";
import { sessionUserFromRequest } from "@/auth/session";
import { digest, randomSecret, secretMatchesDigest } from "@/secrets";
import { db, write } from "@/db/client";
import { log } from "@/observability/log";
import { sealRequest, signReceivedAt, verifiedReceivedAt, type AuthorizationRequest } from "@/oauth/authorization-request";
import type { OAuthErrorCode } from "@/oauth/errors";
import { OAuthError } from "@/oauth/errors";
import { challengeProblem } from "@/oauth/pkce";
import { assertWithinRegisteredScope, formatScope, isSubset, parseScope, storedScopes, type Scope } from "@/oauth/scope";
import { startGrant } from "@/oauth/tokens";
import { requestedAudience } from "@/oauth/resource";
import { claimPushedRequest, pushedParams, REQUEST_URI_PREFIX } from "@/oauth/pushed-request-store";
import { countTokenIssued } from "@/observability/metrics";
import { isMetadataDocumentClientId, metadataDocumentClient, MetadataDocumentError } from "@/client-metadata-documents/document-client";

export const AUTHORIZATION_CODE_TTL_SECONDS = 60;

type ResponseMode = "query" | "fragment";
type Target = { redirectUri: string; mode: ResponseMode; state: string | null };

/** The redirect that carries an authorization response (or error) to the client, with `iss` (RFC 9207). */
export function responseRedirect(target: Target, params: Record<string, string>, status: 302 | 303 = 302): Response {
  const all = new URLSearchParams(params);
  if (target.state !== null) all.set("state", target.state);
  all.set("iss", env().appUrl);
  if (target.mode === "fragment") return redirect(`${target.redirectUri}#${all.toString()}`, status);
  const url = new URL(target.redirectUri);
  for (const [name, value] of all) url.searchParams.append(name, value);
  return redirect(url.toString(), status);
}

export function errorRedirect(target: Target, error: OAuthErrorCode, status: 302 | 303 = 302): Response {
  return responseRedirect(target, { error }, status);
}

/** Issues the code or the implicit token for an approved request and redirects to the client. */
export async function completeAuthorization(request: AuthorizationRequest, client: Client, status: 302 | 303 = 302): Promise<Response> {
  const target: Target = { redirectUri: request.redirectUri, mode: request.responseType === "token" ? "fragment" : "query", state: request.state };
  if (request.responseType === "token") {
    // RFC 6749 4.2.2: never a refresh token in an implicit response.
    const record = await startGrant({ clientId: client.id, publicClientId: client.clientId, userId: request.userId, grantType: "implicit", scopes: request.scopes, withRefreshToken: false, audience: request.audience ?? null });
    countTokenIssued("implicit");
    return responseRedirect(target, { access_token: record.access_token, token_type: "Bearer", expires_in: String(record.expires_in), scope: record.scope }, status);
  }
  const code = randomSecret();
  await write(async (tx) => {
    const at = now();
    const grant = await tx.grant.create({
      data: {
        clientId: client.id,
        userId: request.userId,
        grantType: "authorization_code",
        scopes: formatScope(request.scopes),
        createdAt: at,
        lastUsedAt: at,
        authTime: request.authTime ? new Date(request.authTime * 1000) : null,
        nonce: request.nonce ?? null,
        sid: request.sid ?? null,
      },
    });
    await tx.authorizationCode.create({
      data: {
        digest: digest(code),
        grantId: grant.id,
        clientId: client.id,
        userId: request.userId,
        redirectUri: request.redirectUri,
        scopes: formatScope(request.scopes),
        codeChallenge: request.codeChallenge,
        codeChallengeMethod: request.codeChallenge ? "S256" : null,
        audience: request.audience ?? null,
        createdAt: at,
        expiresAt: new Date(at.getTime() + AUTHORIZATION_CODE_TTL_SECONDS * 1000),
      },
    });
  });
  return responseRedirect(target, { code }, status);
}

/**
 * Whether the user must be asked. First-party clients never; public and implicit clients always (their
 * redirect URI is their only proof of identity, RFC 6749 10.2); a confidential client while no remembered
 * consent covers the scopes.
 */
export async function needsConsent(client: Client, userId: number, scopes: Scope[]): Promise<boolean> {
  if (client.firstParty) return false;
  if (isPublicClient(client)) return true;
  const consent = await (await db()).consent.findUnique({ where: { userId_clientId: { userId, clientId: client.id } } });
  return !consent || !isSubset(scopes, storedScopes(consent.scopes));
}

const single = (query: URLSearchParams, name: string): string | undefined => {
  const values = query.getAll(name);
  if (values.length > 1) throw new OAuthError("invalid_request", {}, `${name} repeated`);
  return values[0] === "" ? undefined : values[0];
};

/**
 * Whether the user must type their password (again) before this request can go on, from server state only:
 * prompt=login (max_age=0 included) unless the session signed in at or after `receivedAt`, the time the
 * request was received (seconds; null: received just now, so no earlier sign-in meets it); a max_age that
 * the session's sign-in time exceeds; or an OpenID request from a session that never recorded its sign-in
 * time. auth_time has a precision of one second, so a sign-in in the same second as the request counts as
 * after it.
 */
function needsLogin(request: Validated, authTime: number | null, receivedAt: number | null): boolean {
  if (authTime === null) return request.prompt.has("login") || request.maxAge !== null || request.scopes.includes("openid");
  if (request.prompt.has("login") && (receivedAt === null || authTime < receivedAt)) return true;
  return request.maxAge !== null && Math.floor(nowMs() / 1000) - authTime > request.maxAge;
}

/**
 * The sign-in page, then back to this request. A pushed request comes back as client_id and request_uri
 * only (its row knows when it was received). A plain one comes back as it was sent, less the optional
 * client_secret, and, when the password must be typed again, with the time it was received signed into
 * `auth_after`, so that a sign-in after that time lets it go on once, and an earlier session does not.
 */
function loginRedirect(url: URL, options: { pushed: boolean; reauthenticate: boolean; receivedAt: number | null }): Response {
  const back = new URL(url.pathname, env().appUrl);
  if (options.pushed) {
    for (const name of ["client_id", "request_uri"]) back.searchParams.set(name, url.searchParams.get(name)!);
  } else {
    for (const [name, value] of url.searchParams) if (name !== "client_secret" && name !== "auth_after") back.searchParams.append(name, value);
    if (options.reauthenticate) back.searchParams.set("auth_after", signReceivedAt(options.receivedAt ?? Math.floor(nowMs() / 1000), back.searchParams));
  }
  const login = `/login?callbackUrl=${encodeURIComponent(back.pathname + back.search)}`;
  return redirect(options.reauthenticate ? `${login}&prompt=login` : login);
}

/**
 * The error pages of docs/rules/tokens.md#authorization-errors (never a redirect): the OAuth error code and
 * the client_id for developers.
 */
function unknownClientPage(clientId: string | undefined): Response {
  return htmlErrorPage(
    400,
    "Unknown application",
    "This sign-in link names an application that is not registered here. Go back to the application and try again.",
    [
      ["Error", "invalid_client"],
      ["client_id", clientId ? clientId : "(missing)"],
    ],
  );
}

/** A client_id naming a metadata document that cannot be used (docs/rules/tokens.md#client-id-metadata-documents). */
function metadataDocumentPage(clientId: string, problem: string): Response {
  return htmlErrorPage(400, "Unknown application", "This sign-in link names an application whose description could not be used. Go back to the application and try again.", [
    ["Error", "invalid_client"],
    ["client_id", clientId],
    ["Problem", `its metadata document ${problem}`],
  ]);
}

/**
 * The page for a redirect URI that cannot be used (docs/rules/pages.md#error-pages): what was received, and,
 * to the client's owner signed in here only, what is registered, so that a developer sees the difference; nobody
 * else learns a client's registered addresses.
 */
async function invalidRedirectPage(request: Request, client: Client, problem: string, received: string[], registered: string[]): Promise<Response> {
  const facts: [string, string][] = [
    ["Error", "invalid_request"],
    ["client_id", client.clientId],
    ...received.slice(0, 5).map((uri): [string, string] => ["redirect_uri received", uri]),
  ];
  const viewer = client.ownerId === null ? null : await sessionUserFromRequest(request);
  if (viewer && viewer.id === client.ownerId) {
    if (registered.length === 0) facts.push(["Registered redirect URIs", "none"]);
    for (const uri of registered.slice(0, 10)) facts.push(["Registered (you own this client)", uri]);
  }
  return htmlErrorPage(400, "Invalid redirect URI", `${problem} You cannot be sent back to the application.`, facts);
}

const BEFORE_REDIRECT = new Set(["client_id", "request_uri", "redirect_uri", "response_type"]);

function controlCharacterPage(field: string): Response {
  return htmlErrorPage(400, "Invalid sign-in request", `The sign-in request's ${field} holds a control character. Go back to the application and try again.`, [["Error", "invalid_request"]]);
}

function invalidRequestPage(code: OAuthErrorCode, clientId: string): Response {
  return htmlErrorPage(
    400,
    "Invalid sign-in request",
    "The application sent a sign-in request that cannot be handled. Go back to the application and try again.",
    [
      ["Error", code],
      ["client_id", clientId],
    ],
  );
}

function requestUriPage(): Response {
  return htmlErrorPage(400, "Sign-in request expired", "This sign-in link has expired or was already used. Go back to the application and try again.", [["Error", "invalid_request_uri"]]);
}

/**
 * POST to the authorization endpoint (OpenID Connect Core 3.1.2.1; docs/rules/openid-connect.md#authorization-post):
 * the form body's parameters, exactly as the same parameters in a GET's query (its query string, if any, is
 * not read). The session cookie is SameSite=Lax, so a cross-site POST arrives without it: a POST that the
 * session signs in is handled here and now; any other is answered 303 to the same request as a GET on our
 * origin, which the browser follows as a top-level GET, with the cookie it holds. So a signed-in person never
 * looks signed out because their browser posted.
 */
export async function handleAuthorizationPost(request: Request): Promise<Response> {
  const params = await readFormParams(request, "invalid_request");
  const url = new URL(request.url);
  const asGet = new URL(`${url.pathname}?${params}`, url.origin);
  if (!(await sessionUserFromRequest(request))) return redirect(`${env().appUrl}${asGet.pathname}${asGet.search}`, 303);
  return handleAuthorizationRequest(new Request(asGet, { method: "GET", headers: request.headers }));
}

export async function handleAuthorizationRequest(request: Request): Promise<Response> {
  const url = new URL(request.url);
  let query = url.searchParams;
  // The input rule (src/http/input-text.ts): a control character in what finds the client and its redirect
  // URI is the error page; anywhere else, invalid_request by the rules below.
  const early = controlCharacterField(new URLSearchParams([...query].filter(([name]) => BEFORE_REDIRECT.has(name))));
  if (early !== null) return controlCharacterPage(early);
  const clientIds = query.getAll("client_id");
  if (clientIds.length !== 1 || !clientIds[0]) return unknownClientPage(clientIds[0]);
  let client: Client | null;
  try {
    client = isMetadataDocumentClientId(clientIds[0])
      ? await metadataDocumentClient(clientIds[0])
      : await (await db()).client.findUnique({ where: { clientId: clientIds[0] } });
  } catch (error) {
    if (error instanceof MetadataDocumentError) return metadataDocumentPage(clientIds[0], error.message);
    throw error;
  }
  if (!client) return unknownClientPage(clientIds[0]);

  const requestUris = query.getAll("request_uri");
  let pushedId: number | null = null;
  // Request objects are not supported (docs/rules/openid-connect.md#request-objects): once the redirect URI is
  // known, `request` is answered request_not_supported, and a request_uri that is not one of our pushed
  // requests' URNs request_uri_not_supported (OpenID Connect Core 3.1.2.6).
  let unsupported: "request_not_supported" | "request_uri_not_supported" | null = query.has("request") ? "request_not_supported" : null;
  // When the request was received (seconds): a pushed one's row says; a plain one's way back through the
  // sign-in page may carry it, signed by this endpoint; otherwise now (null).
  let receivedAt: number | null;
  if (requestUris.length === 1 && !requestUris[0]!.startsWith(REQUEST_URI_PREFIX)) {
    unsupported ??= "request_uri_not_supported";
    receivedAt = null;
  } else if (requestUris.length > 0) {
    const pushed = requestUris.length === 1 ? await pushedParams(requestUris[0]!, client.id) : null;
    if (!pushed) return requestUriPage();
    pushedId = pushed.id;
    // RFC 9126 4: the stored parameters alone; nothing else in the URL counts.
    query = pushed.query;
    receivedAt = Math.floor(pushed.receivedAt.getTime() / 1000);
  } else if (client.requirePar) {
    return invalidRequestPage("invalid_request", client.clientId);
  } else {
    receivedAt = verifiedReceivedAt(query);
  }

  // The redirect URI must be known before any error can be sent to it.
  const registered = redirectUrisOf(client);
  const presentedUris = query.getAll("redirect_uri");
  const responseTypeRaw = query.get("response_type");
  const mode: ResponseMode = responseTypeRaw === "token" ? "fragment" : "query";
  let redirectUri: string;
  if (presentedUris.length > 1) {
    return invalidRedirectPage(request, client, "The request names more than one redirect_uri.", presentedUris, registered);
  } else if (presentedUris[0]) {
    const matched = matchRedirectUri(registered, presentedUris[0]);
    if (!matched) return invalidRedirectPage(request, client, "The redirect_uri of this request is not registered for the application.", presentedUris, registered);
    redirectUri = matched;
  } else if (responseTypeRaw === "token") {
    // docs/rules/tokens.md#implicit: implicit without redirect_uri goes to the first registered URI, else the
    // landing page.
    if (!registered[0]) return redirect(`/?${new URLSearchParams({ error: "unauthorized_client", client: client.name, client_id: client.clientId })}`);
    redirectUri = registered[0];
  } else {
    return invalidRedirectPage(request, client, "The request has no redirect_uri; it is required for this kind of application.", [], registered);
  }

  const stateValues = query.getAll("state");
  const target: Target = { redirectUri, mode, state: stateValues.length === 1 && stateValues[0] ? stateValues[0] : null };
  const user = await sessionUserFromRequest(request);
  try {
    const refused = controlCharacterField(url.searchParams);
    if (refused !== null) throw new OAuthError("invalid_request", {}, controlCharacterMessage(refused));
    // Redirected whoever asks, signed in or not, like prompt=none's login_required: the client learns at once
    // that this server takes no request objects (docs/rules/openid-connect.md#request-objects).
    if (unsupported !== null) return errorRedirect(target, unsupported);
    const validated = await validateAuthorizationRequest(query, client, target);
    const { prompt, maxAge: _maxAge, ...fields } = validated;
    // prompt=none never shows a page (OpenID Connect Core 3.1.2.6): it answers with an error instead.
    const silent = prompt.has("none");
    if (!user || needsLogin(validated, user.authTime, receivedAt)) {
      // Back to this same request after sign-in; the optional client_secret (already checked) is left out.
      if (silent) return errorRedirect(target, "login_required");
      const reauthenticate = user !== null || prompt.has("login") || validated.maxAge !== null;
      return loginRedirect(url, { pushed: pushedId !== null, reauthenticate, receivedAt });
    }
    // A pushed request is used up here, once a signed-in person reaches the decision (claim first).
    if (pushedId !== null && !(await claimPushedRequest(pushedId))) return requestUriPage();
    const authorization: Omit<AuthorizationRequest, "expiresAt"> = { ...fields, userId: user.id, authTime: user.authTime, sid: user.sid };
    if (!prompt.has("consent") && !(await needsConsent(client, user.id, validated.scopes))) {
      return await completeAuthorization({ ...authorization, expiresAt: 0 }, client);
    }
    if (silent) return errorRedirect(target, "consent_required");
    return redirect(`/consent?request=${encodeURIComponent(sealRequest(authorization))}`);
  } catch (error) {
    if (error instanceof OAuthError) {
      log.info("authorization request refused", { client: client.clientId, error: error.code, detail: error.detail, signedIn: user !== null });
      // RFC 9700 4.11.2 (docs/rules/tokens.md#authorization-errors): a signed-out visitor's invalid request
      // gets the error page, so that nobody can use this endpoint to bounce people to a client's registered
      // URI without a sign-in. Hook for prompt=none (docs/rules/openid-connect.md#authorization-parameters):
      // its `login_required` is the one error that still redirects a signed-out visitor; it is not a
      // validation failure and is answered before this point.
      if (!user) return invalidRequestPage(error.code, client.clientId);
      return errorRedirect(target, error.code);
    }
    throw error;
  }
}

const PROMPTS = new Set(["none", "login", "consent"]);

/** OpenID Connect Core 3.1.2.1: a space-separated set of none, login, consent; none stands alone. */
function parsePrompt(raw: string | undefined): Set<string> {
  const values = new Set((raw ?? "").split(" ").filter(Boolean));
  for (const value of values) if (!PROMPTS.has(value)) throw new OAuthError("invalid_request", {}, `unsupported prompt ${value}`);
  if (values.has("none") && values.size > 1) throw new OAuthError("invalid_request", {}, "prompt=none with other values");
  return values;
}

/** A whole number of seconds (max_age), or null when absent. */
function seconds(query: URLSearchParams, name: string): number | null {
  const raw = single(query, name);
  if (raw === undefined) return null;
  if (!/^\d{1,10}$/.test(raw)) throw new OAuthError("invalid_request", {}, `${name} must be a whole number of seconds`);
  return Number(raw);
}

type Validated = Awaited<ReturnType<typeof validateAuthorizationRequest>>;

/** Checks an authorization request's parameters (also a pushed one's, src/par/); throws OAuthError. */
export async function validateAuthorizationRequest(query: URLSearchParams, client: Client, target: Target) {
  for (const name of ["response_type", "scope", "state", "client_secret", "code_challenge", "code_challenge_method", "nonce", "prompt", "max_age"]) single(query, name);
  const responseType = single(query, "response_type");
  if (!responseType) throw new OAuthError("invalid_request", {}, "no response_type");
  if (responseType !== "code" && responseType !== "token") throw new OAuthError("unsupported_response_type");
  const expected = client.grantType === "authorization_code" ? "code" : client.grantType === "implicit" ? "token" : null;
  if (responseType !== expected) throw new OAuthError("unauthorized_client");
  if (target.state === null) throw new OAuthError("invalid_request", {}, "no state");
  const scopes = parseScope(single(query, "scope"));
  if (!scopes) throw new OAuthError("invalid_request", {}, "no scope");
  assertWithinRegisteredScope(scopes, client.scope);
  // RFC 8707: the resource named here is the audience of what the grant issues (docs/rules/agents.md#audience).
  const audience = requestedAudience(query.getAll("resource"));

  let codeChallenge: string | null = null;
  if (responseType === "token") {
    const secret = single(query, "client_secret");
    if (secret !== undefined && (!client.secretDigest || !secretMatchesDigest(secret, client.secretDigest))) {
      throw new OAuthError("unauthorized_client", {}, "wrong client_secret");
    }
  } else {
    const challenge = single(query, "code_challenge");
    const problem = challengeProblem(challenge, single(query, "code_challenge_method"));
    if (problem) throw new OAuthError("invalid_request", {}, problem);
    if (!challenge && isPublicClient(client)) throw new OAuthError("invalid_request", {}, "PKCE required for public clients");
    codeChallenge = challenge ?? null;
  }
  const nonce = single(query, "nonce") ?? null;
  if (nonce !== null && nonce.length > 500) throw new OAuthError("invalid_request", {}, "nonce longer than 500 characters");
  const prompt = parsePrompt(single(query, "prompt"));
  const maxAge = seconds(query, "max_age");
  return {
    clientId: client.clientId,
    responseType,
    redirectUri: target.redirectUri,
    scopes,
    state: target.state,
    codeChallenge,
    audience,
    // The nonce only matters to an id_token, which only a code grant holding openid gets.
    nonce: responseType === "code" && scopes.includes("openid") ? nonce : null,
    // max_age=0 asks for a fresh sign-in, as prompt=login does (OpenID Connect Core 3.1.2.1): a sign-in after
    // the request was received meets it, as it does prompt=login.
    prompt: maxAge === 0 && !prompt.has("none") ? new Set([...prompt, "login"]) : prompt,
    maxAge: maxAge === 0 && !prompt.has("none") ? null : maxAge,
  } as const;
}
