// Reading the audit log (docs/rules/operations.md#audit-log): `audit:list` in the CLI ([{"type", "at", "user",
// "client", "ip", "detail"}], newest first; `user` is the person's e-mail, `client` the public client_id) and
// a person's own recent events on /settings/security.
import type { AuditDetail, AuditEventType } from "@/audit/events";
import { db } from "@/db/client";

export type AuditEventView = { type: string; at: string; user: string | null; client: string | null; ip: string | null; detail: AuditDetail | null };

function parseDetail(detail: string | null): AuditDetail | null {
  if (!detail) return null;
  try {
    return JSON.parse(detail) as AuditDetail;
  } catch {
    return null;
  }
}

export async function listAuditEvents(options: { userId?: number; type?: AuditEventType; limit: number }): Promise<AuditEventView[]> {
  const client = await db();
  const rows = await client.auditEvent.findMany({
    where: { ...(options.userId !== undefined ? { userId: options.userId } : {}), ...(options.type ? { type: options.type } : {}) },
    orderBy: [{ at: "desc" }, { id: "desc" }],
    take: options.limit,
  });
  const userIds = [...new Set(rows.map((row) => row.userId).filter((id): id is number => id !== null))];
  const users = userIds.length ? await client.user.findMany({ where: { id: { in: userIds } }, select: { id: true, email: true } }) : [];
  const emails = new Map(users.map((user) => [user.id, user.email]));
  return rows.map((row) => ({
    type: row.type,
    at: row.at.toISOString(),
    user: row.userId === null ? null : (emails.get(row.userId) ?? `user ${row.userId}`),
    client: row.clientId,
    ip: row.ip,
    detail: parseDetail(row.detail),
  }));
}

/** A person's own events, with the names of the apps involved (for /settings/security). */
export async function ownSecurityEvents(userId: number, limit = 50) {
  const client = await db();
  const rows = await client.auditEvent.findMany({ where: { userId }, orderBy: [{ at: "desc" }, { id: "desc" }], take: limit });
  const clientIds = [...new Set(rows.map((row) => row.clientId).filter((id): id is string => id !== null))];
  const clients = clientIds.length ? await client.client.findMany({ where: { clientId: { in: clientIds } }, select: { clientId: true, name: true } }) : [];
  const names = new Map(clients.map((found) => [found.clientId, found.name]));
  return rows.map((row) => ({
    id: row.id,
    type: row.type,
    at: row.at,
    ip: row.ip,
    appName: row.clientId === null ? null : (names.get(row.clientId) ?? null),
    detail: parseDetail(row.detail) ?? {},
  }));
}
