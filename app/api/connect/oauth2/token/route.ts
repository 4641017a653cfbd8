import { route } from "@/http/route";
import { handleTokenRequest } from "@/token-endpoint/token-endpoint";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handleTokenRequest }, { kind: "oauth", cors: true });
