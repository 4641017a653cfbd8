// Any /api path that no other route claims: JSON 404, never Next's HTML page.
import { json } from "@/http/respond";

const notFound = async () => json({ error: "no such endpoint" }, 404);

export const GET = notFound;
export const POST = notFound;
export const PUT = notFound;
export const DELETE = notFound;
export const PATCH = notFound;
