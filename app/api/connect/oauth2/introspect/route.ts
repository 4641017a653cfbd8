import { route } from "@/http/route";
import { handleIntrospectionRequest } from "@/oauth/introspect";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handleIntrospectionRequest }, { kind: "oauth", cors: true });
