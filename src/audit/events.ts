// The security events of the audit log (docs/rules/operations.md#audit-log), by name.
export const AUDIT_EVENT_TYPES = [
  "signin.succeeded",
  "signin.failed",
  "token.issued",
  "token.refreshed",
  "token.revoked",
  "token.reuse_detected",
  "code.reused",
  "rate_limited",
  "consent.granted",
  "consent.revoked",
  "client.created",
  "client.secret_rotated",
  "client.updated",
  "client.deleted",
  "permission_request.created",
  "permission_request.redeemed",
  "permission_request.declined",
  "signing_key.rotated",
  "account.confirmed",
  "password.reset",
  "signing_key.revoked",
] as const;

export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

/** Facts an event may carry: short, non-secret values only (grant type, scopes, reason, ids). */
export type AuditDetail = Record<string, string | number | boolean | null>;
