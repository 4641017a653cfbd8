import { deleteBundle } from "@/bundles/delete-bundle";
import { getBundle } from "@/bundles/get-bundle";
import { authenticate } from "@/resource/authenticate";
import { json, noContent } from "@/http/respond";
import { param, route } from "@/http/route";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: async (request, context) => {
      const principal = await authenticate(request, "readonly");
      return json(await getBundle({ id: await param(context, "id"), viewerId: principal.userId }));
    },
    DELETE: async (request, context) => {
      const principal = await authenticate(request, "readwrite");
      await deleteBundle({ id: await param(context, "id"), viewerId: principal.userId });
      return noContent();
    },
  },
  { cors: true },
);
