import { route } from "@/http/route";
import { handleDeviceAuthorizationRequest } from "@/device/start-device-authorization";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handleDeviceAuthorizationRequest }, { kind: "oauth", cors: true });
