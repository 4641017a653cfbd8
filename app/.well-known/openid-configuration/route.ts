import { json } from "@/http/respond";
import { route } from "@/http/route";
import { openidConfiguration } from "@/oidc/discovery";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  { GET: async () => json(openidConfiguration(), 200, { "Cache-Control": "public, max-age=3600" }) },
  { cors: true },
);
