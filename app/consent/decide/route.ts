import { htmlFailurePage } from "@/http/html";
import { errorResponse } from "@/http/route";
import { handleConsentDecision } from "@/consent/decide-consent";

export async function POST(request: Request): Promise<Response> {
  try {
    return await handleConsentDecision(request);
  } catch (error) {
    return htmlFailurePage(errorResponse(error, request, "oauth"), "Something went wrong", "Your decision could not be recorded. Try again in a moment.");
  }
}
