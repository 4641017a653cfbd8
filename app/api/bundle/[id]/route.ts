import { deleteBundle } from "@/bundles/delete-bundle";
import { getBundle } from "@/bundles/get-bundle";
import { authenticate } from "@/resource/authenticate";
import { json, noContent } from "@/http/respond";
import { andThen, param, route } from "@/http/route";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: (request, context) =>
      andThen(authenticate(request, "readonly"), (principal) =>
        andThen(param(context, "id"), (id) => andThen(getBundle({ id, viewerId: principal.userId }), (bundle) => json(bundle))),
      ),
    DELETE: async (request, context) => {
      const principal = await authenticate(request, "readwrite");
      await deleteBundle({ id: await param(context, "id"), viewerId: principal.userId });
      return noContent();
    },
  },
  { cors: true },
);
