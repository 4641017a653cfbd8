// A browser endpoint (docs/rules/endpoints.md#json-only, docs/rules/tokens.md#authorization-errors): errors
// are an HTML page or a redirect, never JSON.
import { htmlFailurePage } from "@/http/html";
import { errorResponse, route } from "@/http/route";
import { handleAuthorizationRequest } from "@/oauth/authorize";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({
  GET: async (request) => {
    try {
      return await handleAuthorizationRequest(request);
    } catch (error) {
      return htmlFailurePage(errorResponse(error, request, "oauth"), "Something went wrong", "The sign-in request could not be handled. Try again in a moment.");
    }
  },
});
