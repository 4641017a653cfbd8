// Records a security event (docs/rules/operations.md#audit-log): in the caller's transaction when the event
// belongs to a change (so that the two commit or roll back together), else as its own write. Never a token,
// code, secret or password: `detail` holds short facts only, and every string in it passes through the log
// redactor, which strips anything shaped like a token in a path or query.
import { now } from "@/clock";
import { requestContext } from "@/http/request-context";
import { write, type Tx } from "@/db/client";
import { redact } from "@/observability/log";
import type { AuditDetail, AuditEventType } from "@/audit/events";

export type AuditEventInput = {
  type: AuditEventType;
  /** The user involved (internal id), if any. */
  userId?: number | null;
  /** The public client_id involved, if any. */
  clientId?: string | null;
  /** The client address; defaults to the current request's (src/http/request-context.ts). */
  ip?: string | null;
  detail?: AuditDetail;
};

const MAX_DETAIL_STRING = 200;

function cleanDetail(detail: AuditDetail | undefined): string | null {
  if (!detail || Object.keys(detail).length === 0) return null;
  const clean: AuditDetail = {};
  for (const [key, value] of Object.entries(detail)) {
    clean[key] = typeof value === "string" ? redact(value).slice(0, MAX_DETAIL_STRING) : value;
  }
  return JSON.stringify(clean);
}

/** The row an event is stored as (also for the raw SQL of src/db/fast-sql.ts). */
export function auditRow(event: AuditEventInput) {
  return {
    type: event.type,
    at: now(),
    userId: event.userId ?? null,
    clientId: event.clientId ?? null,
    ip: event.ip !== undefined ? event.ip : (requestContext()?.ip ?? null),
    detail: cleanDetail(event.detail),
  };
}

/** Inside the transaction of the change the event records. */
export async function recordEventInTx(tx: Tx, event: AuditEventInput): Promise<void> {
  await tx.auditEvent.create({ data: auditRow(event) });
}

/** An event with no change of its own to join (a failed sign-in, a refused request). */
export async function recordEvent(event: AuditEventInput): Promise<void> {
  const row = auditRow(event);
  await write((tx) => tx.auditEvent.create({ data: row }));
}
