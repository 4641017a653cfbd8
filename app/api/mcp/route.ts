import { route } from "@/http/route";
import { handleMcpRequest, MCP_CORS } from "@/mcp/handle";

export const { GET, POST, PUT, DELETE, PATCH, OPTIONS } = route({ POST: handleMcpRequest }, { cors: MCP_CORS });
