import { authenticate } from "@/resource/authenticate";
import { json } from "@/http/respond";
import { andThen, param, route } from "@/http/route";
import { getUser } from "@/users/get-user";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    // The hot bearer read: chained with andThen() rather than awaited (src/http/route.ts says why).
    GET: (request, context) =>
      andThen(authenticate(request, "readonly"), (principal) =>
        andThen(param(context, "id"), (id) => andThen(getUser({ id, viewer: principal.user }), (user) => json(user))),
      ),
  },
  { cors: true },
);
