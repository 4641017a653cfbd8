import { createBundle } from "@/bundles/create-bundle";
import { listBundles } from "@/bundles/list-bundles";
import { authenticate } from "@/resource/authenticate";
import { readBody } from "@/http/body";
import { pageRequest } from "@/http/collection";
import { json } from "@/http/respond";
import { andThen, route } from "@/http/route";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route(
  {
    // Chained with andThen() rather than awaited, as the bearer read is (src/http/route.ts says why).
    GET: (request) =>
      andThen(authenticate(request, "readonly"), (principal) => andThen(listBundles({ viewerId: principal.userId, page: pageRequest(request) }), (page) => json(page))),
    POST: async (request) => {
      const principal = await authenticate(request, "readwrite");
      const body = await readBody(request);
      const bundle = await createBundle({ ownerId: principal.userId, name: body.name as string });
      return json(bundle, 201, { Location: bundle.resource_uri });
    },
  },
  { cors: true },
);
