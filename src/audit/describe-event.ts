// A security event in words, for the person it concerns (/settings/security,
// docs/rules/operations.md#audit-log, docs/rules/pages.md#security-activity): what happened to their account,
// which app, and from where, every event type in words. Nothing here is secret: events never hold tokens or
// passwords.
import type { AuditDetail } from "@/audit/events";

export type OwnEvent = { type: string; appName: string | null; detail: AuditDetail };

const GRANTS: Record<string, string> = {
  authorization_code: "after you approved it",
  implicit: "in your browser (implicit grant)",
  password: "with your password",
  client_credentials: "for its owner (client credentials)",
  refresh_token: "by refreshing",
  "urn:ietf:params:oauth:grant-type:device_code": "on a device you approved",
};

export function describeEvent({ type, appName, detail }: OwnEvent): string {
  const app = appName ? `“${appName}”` : "an app";
  switch (type) {
    case "signin.succeeded":
      return "You signed in.";
    case "signin.failed":
      return "Someone tried to sign in to your account with a wrong password.";
    case "token.issued":
      return `${app} got access to your account ${GRANTS[String(detail.grant_type)] ?? ""}`.trimEnd() + ".";
    case "token.refreshed":
      return `${app} renewed its access to your account.`;
    case "token.revoked":
      return `${app} lost its access to your account (${String(detail.via ?? "revoked")}).`;
    case "token.reuse_detected":
      return `An old refresh token of ${app} was used again, so all of that app's access was ended. If you did not expect this, someone may have copied its token.`;
    case "code.reused":
      return `A sign-in code for ${app} was used twice, so the access it gave was ended.`;
    case "rate_limited":
      return `Too many attempts (${String(detail.limit ?? "a limit")}): further attempts were refused for a while.`;
    case "consent.granted":
      return `You allowed ${app} to access your account.`;
    case "consent.revoked":
      return `You disconnected ${app}.`;
    case "client.created":
      return `You registered the app ${app}.`;
    case "client.secret_rotated":
      return `You gave ${app} a new client secret.`;
    case "client.updated":
      return `You changed the name or addresses of the app ${app}.`;
    case "client.deleted":
      return `You deleted the app ${app}.`;
    case "permission_request.created":
      return "A permission request was sent.";
    case "permission_request.redeemed":
      return "You accepted a permission request.";
    case "permission_request.declined":
      return "You declined a permission request.";
    case "account.confirmed":
      return detail.via === "password reset" ? "You confirmed your e-mail address by resetting your password." : "You confirmed your e-mail address.";
    case "password.reset":
      return "Your password was changed with a reset link: every session was signed out and every app disconnected.";
    case "signing_key.rotated":
      return "The service's signing key was rotated.";
    case "signing_key.revoked":
      return "The service's signing key was revoked.";
    default:
      return `Security event “${type}”.`;
  }
}

/**
 * A client address as a person reads it: an IPv4 address that reached an IPv6 socket without its `::ffff:`
 * prefix, and the machine's own addresses said in words.
 */
export function readableAddress(ip: string): string {
  const plain = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(ip)?.[1] ?? ip;
  if (plain === "::1" || /^127\./.test(plain)) return `this computer (${plain})`;
  return plain;
}
