import { route } from "@/http/route";
import { handleRegistrationRequest } from "@/registration/register-client";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handleRegistrationRequest }, { kind: "oauth", cors: true });
