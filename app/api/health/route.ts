// Liveness: touches nothing, so that `npm run bench` can compare every hot path with a bare route.
import { JSON_TYPE, TextResponse } from "@/http/respond";

const body = JSON.stringify({ status: "ok" });

export function GET(): Response {
  return new TextResponse(body, { headers: { "Content-Type": JSON_TYPE, "Cache-Control": "no-store" } });
}
