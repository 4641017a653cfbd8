import { json } from "@/http/respond";
import { route } from "@/http/route";
import { serverMetadata } from "@/oauth/metadata";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  { GET: async () => json(serverMetadata(), 200, { "Cache-Control": "public, max-age=3600" }) },
  { cors: true },
);
