import { authenticate } from "@/resource/authenticate";
import { readBody } from "@/http/body";
import { pageRequest } from "@/http/collection";
import { json } from "@/http/respond";
import { andThen, route } from "@/http/route";
import { createPermissionRequest } from "@/permission-requests/create-permission-request";
import { listPermissionRequests } from "@/permission-requests/list-permission-requests";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    // Chained with andThen() rather than awaited, as the bearer read is (src/http/route.ts says why).
    GET: (request) =>
      andThen(authenticate(request, "readonly"), (principal) =>
        andThen(listPermissionRequests({ viewerId: principal.userId, page: pageRequest(request) }), (page) => json(page)),
      ),
    POST: async (request) => {
      const principal = await authenticate(request, "readwrite");
      const record = await createPermissionRequest({ principal, body: await readBody(request) });
      return json(record, 201, { Location: record.resource_uri });
    },
  },
  { cors: true },
);
