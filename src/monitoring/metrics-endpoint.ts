// GET /api/metrics (docs/rules/operations.md#metrics): the Prometheus text format (src/observability/metrics.ts) for
// a scraper that sends `Authorization: Bearer <METRICS_TOKEN>`, compared in constant time (digests of equal
// length). Without METRICS_TOKEN the endpoint does not exist (404, as any unknown /api path); a missing or
// wrong token is 401.
import { createHash, timingSafeEqual } from "node:crypto";
import { env } from "@/env";
import { ApiError } from "@/http/errors";
import { exposition } from "@/observability/metrics";

const digest = (value: string) => createHash("sha256").update(value).digest();

export async function metricsResponse(request: Request): Promise<Response> {
  const expected = env().metricsToken;
  if (!expected) throw new ApiError(404, "no such endpoint");
  const header = request.headers.get("authorization") ?? "";
  const presented = /^Bearer (.+)$/i.exec(header)?.[1] ?? "";
  if (!timingSafeEqual(digest(presented), digest(expected))) {
    throw new ApiError(401, header ? "invalid_token" : "unauthorized", {
      "WWW-Authenticate": header ? 'Bearer realm="metrics", error="invalid_token"' : 'Bearer realm="metrics"',
    });
  }
  const { contentType, text } = await exposition();
  return new Response(text, { status: 200, headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
}
