// <key> is a record id (digits: GET, DELETE) or a token (GET checks, PUT redeems): src/permission-requests/key.ts.
import { authenticate } from "@/resource/authenticate";
import { json, noContent, NO_STORE } from "@/http/respond";
import { param, route, type RouteContext } from "@/http/route";
import { deletePermissionRequest } from "@/permission-requests/delete-permission-request";
import { getPermissionRequest } from "@/permission-requests/get-permission-request";
import { parseRequestKey, wrongMethod } from "@/permission-requests/key";
import { checkPermissionToken, redeemPermissionToken } from "@/permission-requests/use-token";

const key = async (context: RouteContext) => parseRequestKey(await param(context, "key"));

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    GET: async (request, context) => {
      const k = await key(context);
      const principal = await authenticate(request, "readonly");
      if (k.kind === "id") return json(await getPermissionRequest({ id: k.id, viewerId: principal.userId }));
      return json(await checkPermissionToken({ token: k.token, viewerId: principal.userId }), 200, NO_STORE);
    },
    PUT: async (request, context) => {
      const k = await key(context);
      if (k.kind === "id") throw wrongMethod(k);
      const principal = await authenticate(request, "readwrite");
      return json(await redeemPermissionToken({ token: k.token, principal }), 200, NO_STORE);
    },
    DELETE: async (request, context) => {
      const k = await key(context);
      if (k.kind === "token") throw wrongMethod(k);
      const principal = await authenticate(request, "readwrite");
      await deletePermissionRequest({ id: k.id, viewerId: principal.userId });
      return noContent();
    },
  },
  { cors: true },
);
