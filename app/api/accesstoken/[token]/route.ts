import { noContent } from "@/http/respond";
import { param, route } from "@/http/route";
import { deleteAccessToken } from "@/oauth/delete-token";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    DELETE: async (_request, context) => {
      await deleteAccessToken(await param(context, "token"));
      return noContent();
    },
  },
  { cors: true },
);
