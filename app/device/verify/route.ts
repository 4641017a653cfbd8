// The /device form's post: a browser endpoint, answered with a redirect (303) or an HTML page, never JSON.
import { htmlErrorPage } from "@/http/html";
import { errorResponse } from "@/http/route";
import { handleDeviceVerification } from "@/device/verify-user-code";

export async function POST(request: Request): Promise<Response> {
  try {
    return await handleDeviceVerification(request);
  } catch (error) {
    const logged = errorResponse(error, request, "oauth");
    return htmlErrorPage(logged.status, "Something went wrong", "The code could not be checked. Try again in a moment.");
  }
}
