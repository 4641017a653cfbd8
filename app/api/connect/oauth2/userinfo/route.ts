import { route } from "@/http/route";
import { handleUserInfoRequest } from "@/oidc/userinfo";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ GET: handleUserInfoRequest, POST: handleUserInfoRequest }, { kind: "oauth", cors: true });
