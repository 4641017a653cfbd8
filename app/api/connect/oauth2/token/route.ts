import { route } from "@/http/route";
import { handleTokenRequest } from "@/oauth/token-endpoint";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handleTokenRequest }, { kind: "oauth", cors: true });
