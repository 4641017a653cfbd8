import { json } from "@/http/respond";
import { route } from "@/http/route";
import { protectedResourceMetadata } from "@/oauth/resource";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  { GET: async () => json(protectedResourceMetadata(), 200, { "Cache-Control": "public, max-age=3600" }) },
  { cors: true },
);
