// Liveness: touches nothing, so that `npm run bench` can compare every hot path with a bare route. GET stays a
// bare function; every other method answers as on every /api path (docs/rules/endpoints.md#status-codes): 405
// with `Allow` and a JSON error, OPTIONS 204 with `Allow`, under Next (`npm run dev`) as in the fast lane.
import { JSON_TYPE, TextResponse } from "@/http/respond";
import { route } from "@/http/route";

const body = JSON.stringify({ status: "ok" });

export function GET(): Response {
  return new TextResponse(body, { headers: { "Content-Type": JSON_TYPE, "Cache-Control": "no-store" } });
}

export const { POST, PUT, DELETE, PATCH, OPTIONS } = route({ GET: async () => GET() });
