// A browser endpoint (docs/rules/endpoints.md#json-only, docs/rules/tokens.md#authorization-errors): errors
// are an HTML page or a redirect, never JSON.
import { htmlFailurePage } from "@/http/html";
import { errorResponse, route } from "@/http/route";
import { handleAuthorizationPost, handleAuthorizationRequest } from "@/oauth/authorize";

const failurePage = (error: unknown, request: Request) =>
  htmlFailurePage(errorResponse(error, request, "oauth"), "Something went wrong", "The sign-in request could not be handled. Try again in a moment.");

// GET, and POST with a form body (OpenID Connect Core 3.1.2.1, docs/rules/openid-connect.md#authorization-post).
export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({
  GET: async (request) => {
    try {
      return await handleAuthorizationRequest(request);
    } catch (error) {
      return failurePage(error, request);
    }
  },
  POST: async (request) => {
    try {
      return await handleAuthorizationPost(request);
    } catch (error) {
      return failurePage(error, request);
    }
  },
});
