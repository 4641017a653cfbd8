// The outbox by status, for the metrics' mail_outbox_messages gauge (outbox depth:
// docs/rules/operations.md#metrics).
import { db } from "@/server/db";

export async function outboxDepth(): Promise<Record<string, number>> {
  const rows = await (await db()).mailMessage.groupBy({ by: ["status"], _count: { _all: true } });
  return Object.fromEntries(rows.map((row) => [row.status, row._count._all]));
}
