import { createBundlePermission } from "@/bundle-permissions/create-bundle-permission";
import { listBundlePermissions } from "@/bundle-permissions/list-bundle-permissions";
import { authenticate } from "@/resource/authenticate";
import { readBody } from "@/http/body";
import { pageRequest } from "@/http/collection";
import { json } from "@/http/respond";
import { route } from "@/http/route";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: async (request) => {
      const principal = await authenticate(request, "readonly");
      return json(await listBundlePermissions({ viewerId: principal.userId, page: pageRequest(request) }));
    },
    POST: async (request) => {
      const principal = await authenticate(request, "readwrite");
      const permission = await createBundlePermission({ ownerId: principal.userId, body: await readBody(request) });
      return json(permission, 201, { Location: permission.resource_uri });
    },
  },
  { cors: true },
);
