import { ApiError } from "@/http/errors";
import { db } from "@/db/client";

/** Readiness: the database answers a query. 503 when it does not. */
export async function checkDatabase(): Promise<void> {
  try {
    await (await db()).$queryRawUnsafe("SELECT 1");
  } catch {
    throw new ApiError(503, "database unavailable", { "Retry-After": "5" }); // as route() answers an outage
  }
}
