// Liveness: touches nothing, so that `npm run bench` can compare every hot path with a bare route.
const body = JSON.stringify({ status: "ok" });

export function GET(): Response {
  return new Response(body, { headers: { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" } });
}
