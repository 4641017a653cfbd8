// The outbox by status, for the metrics' mail_outbox_messages gauge (docs/rules/operations.md#metrics): the
// outbox gives the gauge its reader when this module loads (the /api/metrics route loads it), so that the
// metrics module imports nothing above it (docs/design.md#layers).
import { db } from "@/db/client";
import { measureOutboxDepth } from "@/observability/metrics";

export async function outboxDepth(): Promise<Record<string, number>> {
  const rows = await (await db()).mailMessage.groupBy({ by: ["status"], _count: { _all: true } });
  return Object.fromEntries(rows.map((row) => [row.status, row._count._all]));
}

measureOutboxDepth(outboxDepth);
