import { route } from "@/http/route";
import { handleRevocationRequest } from "@/oauth/revoke";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handleRevocationRequest }, { kind: "oauth", cors: true });
