import { route } from "@/http/route";
import { handleMcpRequest } from "@/mcp/handle";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handleMcpRequest }, { cors: true });
