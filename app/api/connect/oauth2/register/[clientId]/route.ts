import { param, route } from "@/http/route";
import { deleteRegistration, readRegistration, updateRegistration } from "@/registration/manage-registration";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: async (request, context) => readRegistration(request, await param(context, "clientId")),
    PUT: async (request, context) => updateRegistration(request, await param(context, "clientId")),
    DELETE: async (request, context) => deleteRegistration(request, await param(context, "clientId")),
  },
  { kind: "oauth", cors: true },
);
