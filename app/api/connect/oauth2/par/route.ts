import { route } from "@/http/route";
import { handlePushedAuthorizationRequest } from "@/par/pushed-requests";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handlePushedAuthorizationRequest }, { kind: "oauth", cors: true });
