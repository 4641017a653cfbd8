import { authenticate } from "@/resource/authenticate";
import { readBody } from "@/http/body";
import { pageRequest } from "@/http/collection";
import { json } from "@/http/respond";
import { route } from "@/http/route";
import { createPermissionRequest } from "@/permission-requests/create-permission-request";
import { listPermissionRequests } from "@/permission-requests/list-permission-requests";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: async (request) => {
      const principal = await authenticate(request, "readonly");
      return json(await listPermissionRequests({ viewerId: principal.userId, page: pageRequest(request) }));
    },
    POST: async (request) => {
      const principal = await authenticate(request, "readwrite");
      const record = await createPermissionRequest({ principal, body: await readBody(request) });
      return json(record, 201, { Location: record.resource_uri });
    },
  },
  { cors: true },
);
