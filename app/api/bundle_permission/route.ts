import { createBundlePermission } from "@/bundle-permissions/create-bundle-permission";
import { listBundlePermissions } from "@/bundle-permissions/list-bundle-permissions";
import { authenticate } from "@/resource/authenticate";
import { readBody } from "@/http/body";
import { pageRequest } from "@/http/collection";
import { json } from "@/http/respond";
import { andThen, route } from "@/http/route";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    // Chained with andThen() rather than awaited, as the bearer read is (src/http/route.ts says why).
    GET: (request) =>
      andThen(authenticate(request, "readonly"), (principal) =>
        andThen(listBundlePermissions({ viewerId: principal.userId, page: pageRequest(request) }), (page) => json(page)),
      ),
    POST: async (request) => {
      const principal = await authenticate(request, "readwrite");
      const permission = await createBundlePermission({ ownerId: principal.userId, body: await readBody(request) });
      return json(permission, 201, { Location: permission.resource_uri });
    },
  },
  { cors: true },
);
