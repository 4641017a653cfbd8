import { deleteBundlePermission } from "@/bundle-permissions/delete-bundle-permission";
import { getBundlePermission } from "@/bundle-permissions/get-bundle-permission";
import { authenticate } from "@/resource/authenticate";
import { json, noContent } from "@/http/respond";
import { andThen, param, route } from "@/http/route";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: (request, context) =>
      andThen(authenticate(request, "readonly"), (principal) =>
        andThen(param(context, "id"), (id) => andThen(getBundlePermission({ id, viewerId: principal.userId }), (permission) => json(permission))),
      ),
    DELETE: async (request, context) => {
      const principal = await authenticate(request, "readwrite");
      await deleteBundlePermission({ id: await param(context, "id"), viewerId: principal.userId });
      return noContent();
    },
  },
  { cors: true },
);
