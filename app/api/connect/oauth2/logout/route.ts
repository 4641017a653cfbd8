// A browser endpoint (docs/rules/openid-connect.md#logout): errors are an HTML page, never JSON or a redirect.
import { htmlFailurePage } from "@/http/html";
import { errorResponse, route } from "@/http/route";
import { handleEndSession } from "@/logout/end-session";

async function endSession(request: Request): Promise<Response> {
  try {
    return await handleEndSession(request);
  } catch (error) {
    return htmlFailurePage(errorResponse(error, request, "oauth"), "Something went wrong", "The sign-out request could not be handled. Try again in a moment.");
  }
}

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ GET: endSession, POST: endSession });
