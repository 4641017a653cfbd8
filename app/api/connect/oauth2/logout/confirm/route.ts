// The logout confirmation form's answer (docs/rules/openid-connect.md#logout): an HTML page or a redirect.
import { htmlFailurePage } from "@/http/html";
import { errorResponse, route } from "@/http/route";
import { handleLogoutConfirmation } from "@/logout/end-session";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({
  POST: async (request) => {
    try {
      return await handleLogoutConfirmation(request);
    } catch (error) {
      return htmlFailurePage(errorResponse(error, request, "oauth"), "Something went wrong", "Your sign-out could not be completed. Try again in a moment.");
    }
  },
});
