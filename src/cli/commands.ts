// The admin CLI's commands (docs/rules/operations.md#admin-cli), one function each. A command validates its
// options at once (so that a malformed command line never touches the database) and returns its task; the task
// calls one domain function and returns what to print: the JSON value for --json and the text for people.
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { AUDIT_EVENT_TYPES } from "@/audit/events";
import { listAuditEvents } from "@/audit/list-events";
import { createBundle } from "@/bundles/create-bundle";
import { createClient } from "@/clients/create-client";
import { deleteAnyClient, listAllClients } from "@/clients/admin-clients";
import { createRegistrationToken } from "@/registration/register-client";
import { GRANT_TYPES } from "@/clients/represent";
import { deliverDue, MAX_ATTEMPTS, pendingMailCount } from "@/email/deliver";
import { deliverLogoutsDue, MAX_ATTEMPTS as LOGOUT_MAX_ATTEMPTS } from "@/logout/deliver-logout";
import { listMail } from "@/email/list-mail";
import { ApiError } from "@/http/errors";
import { pruneTokens } from "@/maintenance/prune-tokens";
import { revokeSigningKey, rotateSigningKey } from "@/oidc/keys";
import { db } from "@/db/client";
import { createUser } from "@/users/create-user";
import { userUri } from "@/users/represent";
import { validateOptions, type OptionsConfig } from "@/cli/args";

export type Output = { json: unknown; text: string };
export type Task = () => Promise<Output>;

export type Command = {
  /** The synopsis shown in help and usage errors. */
  usage: string;
  summary: string;
  options: OptionsConfig;
  /** Validates the parsed option values (throwing UsageError) and returns the work to do. */
  prepare: (values: Record<string, unknown>) => Task;
};

const required = (flag: string) => z.string({ error: `--${flag} is required` });

/** A user by e-mail (compared lower-case, as stored); a missing one is an error naming `field`. */
async function userByEmail(email: string, field: string) {
  const user = await (await db()).user.findUnique({ where: { email: email.trim().toLowerCase() } });
  if (!user) throw new ApiError(400, `${field}: no user with that e-mail`);
  return user;
}

const plural = (count: number, noun: string) => `${count} ${noun}${count === 1 ? "" : "s"}`;

// user:create ------------------------------------------------------------------------------------------------

const ZUserCreate = z.object({ email: required("email"), password: required("password"), name: z.string().optional() });

function userCreate(values: Record<string, unknown>): Task {
  const options = validateOptions(ZUserCreate, values);
  return async () => {
    const user = await createUser(options);
    return {
      json: { id: user.id, resource_uri: userUri(user.id), email: user.email, name: user.name },
      text: `Created user ${user.id} ${user.email} ("${user.name}"), ${userUri(user.id)}`,
    };
  };
}

// client:create ----------------------------------------------------------------------------------------------

const ZClientCreate = z.object({
  owner: required("owner"),
  name: required("name"),
  grant: z.enum(GRANT_TYPES, { error: `--grant must be one of ${GRANT_TYPES.join(", ")}` }),
  "redirect-uri": z.array(z.string()).default([]),
  public: z.boolean().default(false),
  "first-party": z.boolean().default(false),
  "require-par": z.boolean().default(false),
  "jwks-file": z.string().min(1).optional(),
  "post-logout-redirect-uri": z.array(z.string()).default([]),
  "backchannel-logout-uri": z.string().optional(),
});

/** The JWK Set in the file given to --jwks-file (docs/rules/tokens.md#client-keys), parsed as JSON. */
async function readJwksFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    throw new ApiError(400, `--jwks-file: cannot read ${path}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, `--jwks-file: ${path} is not JSON`);
  }
}

function clientCreate(values: Record<string, unknown>): Task {
  const options = validateOptions(ZClientCreate, values);
  return async () => {
    const jwks = options["jwks-file"] === undefined ? undefined : await readJwksFile(options["jwks-file"]);
    const owner = await userByEmail(options.owner, "owner");
    const client = await createClient({
      ownerId: owner.id,
      name: options.name,
      grantType: options.grant,
      redirectUris: options["redirect-uri"],
      isPublic: options.public,
      firstParty: options["first-party"],
      requirePar: options["require-par"],
      ...(jwks === undefined ? {} : { jwks }),
      postLogoutRedirectUris: options["post-logout-redirect-uri"],
      backchannelLogoutUri: options["backchannel-logout-uri"] ?? null,
    });
    const yesNo = (flag: boolean) => (flag ? "yes" : "no");
    const text = [
      `Created ${client.grant_type} client "${client.name}" owned by ${owner.email}`,
      `  client_id      ${client.client_id}`,
      jwks !== undefined
        ? `  client_secret  (none: authenticates with private_key_jwt, signed by a key of --jwks-file)`
        : client.client_secret === null
        ? `  client_secret  (none: public client)`
        : `  client_secret  ${client.client_secret}   (shown this once; only its digest is stored)`,
      `  redirect_uris  ${client.redirect_uris.length ? client.redirect_uris.join(" ") : "(none)"}`,
      `  public         ${yesNo(client.public)}`,
      `  first_party    ${yesNo(client.first_party)}`,
      `  require_par    ${yesNo(client.require_pushed_authorization_requests)}`,
      ...(client.post_logout_redirect_uris.length ? [`  post_logout_redirect_uris  ${client.post_logout_redirect_uris.join(" ")}`] : []),
      ...(client.backchannel_logout_uri ? [`  backchannel_logout_uri     ${client.backchannel_logout_uri}`] : []),
    ].join("\n");
    return { json: client, text };
  };
}

// bundle:create ----------------------------------------------------------------------------------------------

const ZBundleCreate = z.object({ owner: required("owner"), name: required("name") });

function bundleCreate(values: Record<string, unknown>): Task {
  const options = validateOptions(ZBundleCreate, values);
  return async () => {
    const owner = await userByEmail(options.owner, "owner");
    const bundle = await createBundle({ ownerId: owner.id, name: options.name });
    return { json: bundle, text: `Created bundle ${bundle.id} "${bundle.name}" owned by ${owner.email}, ${bundle.resource_uri}` };
  };
}

// mail:list --------------------------------------------------------------------------------------------------

const ZMailList = z.object({ to: z.string().optional() });

function mailList(values: Record<string, unknown>): Task {
  const options = validateOptions(ZMailList, values);
  return async () => {
    const messages = await listMail({ to: options.to });
    const blocks = messages.map((message) =>
      [
        `${message.created_at}  ${message.status}  to ${message.to}`,
        `Subject: ${message.subject}`,
        "",
        message.text.trimEnd(),
      ].join("\n"),
    );
    const text = messages.length ? blocks.join("\n\n" + "-".repeat(72) + "\n") : "No messages.";
    return { json: messages, text };
  };
}

// audit:list -------------------------------------------------------------------------------------------------

const ZAuditList = z
  .object({
    user: z.string().optional(),
    type: z.enum(AUDIT_EVENT_TYPES, { error: `--type must be one of ${AUDIT_EVENT_TYPES.join(", ")}` }).optional(),
    limit: z.coerce.number({ error: "--limit must be an integer from 1 to 1000" }).int("--limit must be an integer from 1 to 1000").min(1, "--limit must be an integer from 1 to 1000").max(1000, "--limit must be an integer from 1 to 1000").optional(),
  })
  .strict();

function auditList(values: Record<string, unknown>): Task {
  const options = validateOptions(ZAuditList, values);
  return async () => {
    const user = options.user === undefined ? undefined : await userByEmail(options.user, "--user");
    const events = await listAuditEvents({ userId: user?.id, type: options.type, limit: options.limit ?? 100 });
    const lines = events.map((event) =>
      [event.at, event.type, event.user ? `user ${event.user}` : "", event.client ? `client ${event.client}` : "", event.ip ? `from ${event.ip}` : "", event.detail ? JSON.stringify(event.detail) : ""]
        .filter(Boolean)
        .join("  "),
    );
    return { json: events, text: lines.length ? lines.join("\n") : "No events." };
  };
}

// mail:deliver -----------------------------------------------------------------------------------------------

function mailDeliver(values: Record<string, unknown>): Task {
  validateOptions(z.object({}).strict(), values);
  return async () => {
    const result = await deliverDue();
    const json = { sent: result.sent, failed: result.failed };
    if (!result.delivering) {
      const pending = await pendingMailCount();
      return { json, text: `RESEND_API_KEY is not set: nothing sent, ${plural(pending, "message")} pending in the outbox (see mail:list).` };
    }
    const gaveUp = result.gaveUp ? ` (${result.gaveUp} of them after the last of ${MAX_ATTEMPTS} attempts, now failed)` : result.failed ? " (retried later)" : "";
    return { json, text: `Sent ${plural(result.sent, "message")}, ${result.failed} failed${gaveUp}.` };
  };
}

// logout:deliver ---------------------------------------------------------------------------------------------

function logoutDeliver(values: Record<string, unknown>): Task {
  validateOptions(z.object({}).strict(), values);
  return async () => {
    const result = await deliverLogoutsDue();
    const pending = await (await db()).logoutDelivery.count({ where: { status: "pending" } });
    const json = { sent: result.sent, failed: result.failed, pending };
    const gaveUp = result.gaveUp ? ` (${result.gaveUp} of them after the last of ${LOGOUT_MAX_ATTEMPTS} attempts, now failed)` : result.failed ? " (retried later)" : "";
    return { json, text: `Sent ${plural(result.sent, "logout token")}, ${result.failed} failed${gaveUp}; ${pending} pending.` };
  };
}

// tokens:prune -----------------------------------------------------------------------------------------------

function tokensPrune(values: Record<string, unknown>): Task {
  validateOptions(z.object({}).strict(), values);
  return async () => {
    const counts = await pruneTokens();
    const parts = [
      plural(counts.access_tokens, "access token"),
      plural(counts.refresh_tokens, "refresh token"),
      plural(counts.authorization_codes, "authorization code"),
      plural(counts.grants, "grant"),
      plural(counts.failed_attempts, "failed password attempt"),
      plural(counts.permission_requests, "permission request"),
      plural(counts.device_authorizations, "device authorization"),
      plural(counts.account_tokens, "account token"),
      plural(counts.mail_messages, "mail message"),
      plural(counts.dpop_proofs, "DPoP proof"),
      plural(counts.client_assertions, "client assertion"),
      plural(counts.pushed_requests, "pushed authorization request"),
      plural(counts.registration_tokens, "registration token"),
      plural(counts.audit_events, "audit event"),
    ];
    return { json: counts, text: `Pruned ${parts.join(", ")}.` };
  };
}

// registration:token, client:list, client:delete (docs/rules/tokens.md#dynamic-registration) -------------------

function registrationToken(values: Record<string, unknown>): Task {
  validateOptions(z.object({}).strict(), values);
  return async () => {
    const token = await createRegistrationToken();
    return {
      json: token,
      text: `Initial access token (one registration, until ${token.expires_at}; shown this once):\n  ${token.token}`,
    };
  };
}

function clientList(values: Record<string, unknown>): Task {
  validateOptions(z.object({}).strict(), values);
  return async () => {
    const clients = await listAllClients();
    const text = clients.length
      ? clients.map((c) => `${c.client_id}  ${c.grant_type}  "${c.name}"  ${c.owner ? `owner ${c.owner.email}` : `registered itself (${c.registration})`}`).join("\n")
      : "No clients.";
    return { json: clients, text };
  };
}

const ZClientDelete = z.object({ "client-id": required("client-id") });

function clientDelete(values: Record<string, unknown>): Task {
  const options = validateOptions(ZClientDelete, values);
  return async () => {
    const deleted = await deleteAnyClient(options["client-id"]);
    return { json: deleted, text: `Deleted client ${deleted.client_id} ("${deleted.name}") with every grant and token it held.` };
  };
}

// keys:rotate -------------------------------------------------------------------------------------------------

function keysRotate(values: Record<string, unknown>): Task {
  validateOptions(z.object({}).strict(), values);
  return async () => {
    const key = await rotateSigningKey();
    return {
      json: key,
      text: `New signing key ${key.kid} (created ${key.created_at}) signs id_tokens from now on; the older keys stay in the JWKS for a day.`,
    };
  };
}

// keys:revoke (a key that leaked: docs/rules/openid-connect.md#signing-keys) ----------------------------------

const ZKeysRevoke = z.object({ kid: required("kid").min(1, "--kid must not be empty") }).strict();

function keysRevoke(values: Record<string, unknown>): Task {
  const options = validateOptions(ZKeysRevoke, values);
  return async () => {
    const revoked = await revokeSigningKey(options.kid);
    const rotated = revoked.rotated_to
      ? ` It was the signing key: the new key ${revoked.rotated_to.kid} (created ${revoked.rotated_to.created_at}) signs id_tokens from now on.`
      : "";
    return {
      json: revoked,
      text: `Revoked signing key ${revoked.kid}: it is no longer in the JWKS, so id_tokens it signed no longer verify.${rotated}`,
    };
  };
}

// The table ---------------------------------------------------------------------------------------------------

export const COMMANDS: Record<string, Command> = {
  "user:create": {
    usage: "user:create --email E --password P [--name N]",
    summary: "Create a user (the name defaults to the e-mail's local part).",
    options: { email: { type: "string" }, password: { type: "string" }, name: { type: "string" } },
    prepare: userCreate,
  },
  "client:create": {
    usage:
      "client:create --owner E --name N --grant authorization_code|implicit|password|client_credentials|device_code\n" +
      "              [--redirect-uri U]... [--public] [--first-party] [--require-par] [--jwks-file PATH]\n" +
      "              [--post-logout-redirect-uri U]... [--backchannel-logout-uri U]",
    summary: "Register a client owned by the user with e-mail E; its secret is shown once.",
    options: {
      owner: { type: "string" },
      name: { type: "string" },
      grant: { type: "string" },
      "redirect-uri": { type: "string", multiple: true },
      public: { type: "boolean" },
      "first-party": { type: "boolean" },
      "require-par": { type: "boolean" },
      "jwks-file": { type: "string" },
      "post-logout-redirect-uri": { type: "string", multiple: true },
      "backchannel-logout-uri": { type: "string" },
    },
    prepare: clientCreate,
  },
  "client:list": {
    usage: "client:list",
    summary: "List every client: those people registered (with their owner) and those that registered themselves.",
    options: {},
    prepare: clientList,
  },
  "client:delete": {
    usage: "client:delete --client-id ID",
    summary: "Delete any client, with every grant, token, code and consent it had.",
    options: { "client-id": { type: "string" } },
    prepare: clientDelete,
  },
  "registration:token": {
    usage: "registration:token",
    summary: "Make an initial access token for one dynamic client registration (REGISTRATION=token), valid 24 hours.",
    options: {},
    prepare: registrationToken,
  },
  "bundle:create": {
    usage: "bundle:create --owner E --name N",
    summary: "Create a bundle owned by the user with e-mail E.",
    options: { owner: { type: "string" }, name: { type: "string" } },
    prepare: bundleCreate,
  },
  "mail:list": {
    usage: "mail:list [--to E]",
    summary: "Show the outbox, newest first, optionally only the mail sent to E.",
    options: { to: { type: "string" } },
    prepare: mailList,
  },
  "mail:deliver": {
    usage: "mail:deliver",
    summary: "Deliver the outbox messages that are due through Resend, and say how many were sent and failed.",
    options: {},
    prepare: mailDeliver,
  },
  "logout:deliver": {
    usage: "logout:deliver",
    summary: "Deliver the back-channel logout tokens that are due, and say how many were sent and failed.",
    options: {},
    prepare: logoutDeliver,
  },
  "keys:rotate": {
    usage: "keys:rotate",
    summary: "Make a new id_token signing key, used from now on; older public keys stay in the JWKS for a day.",
    options: {},
    prepare: keysRotate,
  },
  "keys:revoke": {
    usage: "keys:revoke --kid K",
    summary: "Withdraw a signing key (one that leaked) from the JWKS at once, so that what it signed stops verifying; when it is the signing key, a new key is made first.",
    options: { kid: { type: "string" } },
    prepare: keysRevoke,
  },
  "audit:list": {
    usage: "audit:list [--user E] [--type T] [--limit N]",
    summary: "Show security events, newest first (at most N, default 100): sign-ins, tokens, consents, clients, permission requests, keys.",
    options: { user: { type: "string" }, type: { type: "string" }, limit: { type: "string" } },
    prepare: auditList,
  },
  "tokens:prune": {
    usage: "tokens:prune",
    summary: "Delete expired and revoked tokens, codes and grants, old failed attempts, ended permission requests and account tokens, and their mail.",
    options: {},
    prepare: tokensPrune,
  },
};
