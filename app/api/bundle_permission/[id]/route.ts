import { deleteBundlePermission } from "@/bundle-permissions/delete-bundle-permission";
import { getBundlePermission } from "@/bundle-permissions/get-bundle-permission";
import { authenticate } from "@/resource/authenticate";
import { json, noContent } from "@/http/respond";
import { param, route } from "@/http/route";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: async (request, context) => {
      const principal = await authenticate(request, "readonly");
      return json(await getBundlePermission({ id: await param(context, "id"), viewerId: principal.userId }));
    },
    DELETE: async (request, context) => {
      const principal = await authenticate(request, "readwrite");
      await deleteBundlePermission({ id: await param(context, "id"), viewerId: principal.userId });
      return noContent();
    },
  },
  { cors: true },
);
