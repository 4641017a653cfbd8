import { htmlErrorPage } from "@/http/html";
import { errorResponse } from "@/http/route";
import { handleConsentDecision } from "@/oauth/consent";

export async function POST(request: Request): Promise<Response> {
  try {
    return await handleConsentDecision(request);
  } catch (error) {
    const logged = errorResponse(error, request, "oauth");
    return htmlErrorPage(logged.status, "Something went wrong", "Your decision could not be recorded. Try again in a moment.");
  }
}
