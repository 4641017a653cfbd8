import { json } from "@/http/respond";
import { route } from "@/http/route";
import { MCP_AUDIENCE, protectedResourceMetadata } from "@/oauth/resource";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  { GET: async () => json(protectedResourceMetadata(MCP_AUDIENCE), 200, { "Cache-Control": "public, max-age=3600" }) },
  { cors: true },
);
