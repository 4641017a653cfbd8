import { authenticate } from "@/http/auth";
import { json } from "@/http/respond";
import { param, route } from "@/http/route";
import { getUser } from "@/users/get-user";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: async (request, context) => {
      const principal = await authenticate(request, "readonly");
      return json(await getUser({ id: await param(context, "id"), viewer: principal.user }));
    },
  },
  { cors: true },
);
