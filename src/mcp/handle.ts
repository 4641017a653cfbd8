// POST /api/mcp: the Model Context Protocol server (docs/rules/agents.md), Streamable HTTP transport of MCP
// 2025-11-25 on the official TypeScript SDK's server, stateless (a server and a transport per request, JSON
// answers rather than event streams; no session, so GET and DELETE are 405).
// Authorization (MCP 2025-11-25, basic/authorization): an access token whose audience is `<APP_URL>/api/mcp`
// (RFC 8707; docs/rules/agents.md#audience), sent as Bearer or DPoP as on /api (src/resource/authenticate.ts);
// none or another resource's token is 401 with both challenges, Bearer first, naming this resource's metadata
// (RFC 9728 5.1). A call of a tool that changes something with a token lacking readwrite is HTTP 403
// insufficient_scope naming the scope and the metadata (RFC 6750 3.1, MCP's step-up), before any tool runs
// (docs/rules/agents.md#scopes-and-step-up). Browser-based MCP clients of any origin: CORS as on /api plus the
// transport's own headers (docs/rules/agents.md#browser-clients).
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { ApiError } from "@/http/errors";
import type { CorsHeaders } from "@/http/route";
import { json } from "@/http/respond";
import { allows } from "@/oauth/scope";
import { MCP_AUDIENCE, resourceMetadataUrl } from "@/oauth/resource";
import { DPOP_ALGS } from "@/dpop/proof";
import { authenticateToken, type Principal } from "@/resource/authenticate";
import { mcpServer, WRITE_TOOLS } from "@/mcp/tools";

/**
 * The Streamable HTTP transport's headers a browser-based client sends (MCP 2025-11-25, basic/transports) and
 * reads, beyond those every CORS route allows and exposes (docs/rules/endpoints.md#cors).
 */
export const MCP_CORS: CorsHeaders = {
  allowHeaders: ["Mcp-Protocol-Version", "Mcp-Session-Id", "Last-Event-ID"],
  exposeHeaders: ["Mcp-Session-Id"],
};

/** JSON-RPC 2.0's parse error, as the transport answers it. */
const PARSE_ERROR = { jsonrpc: "2.0", error: { code: -32700, message: "Parse error: invalid JSON" }, id: null } as const;

/** 403 with the step-up challenge: Bearer first, then DPoP, each naming the scope and the metadata. */
function insufficientScope(): ApiError {
  const metadata = `resource_metadata="${resourceMetadataUrl(MCP_AUDIENCE)}"`;
  const wanted = `error="insufficient_scope", scope="readwrite", ${metadata}`;
  return new ApiError(403, "this token lacks the readwrite scope", {
    "WWW-Authenticate": `Bearer ${wanted}, DPoP algs="${DPOP_ALGS.join(" ")}", ${wanted}`,
  });
}

/** Whether a JSON-RPC message (or any of a batch) calls a tool that changes something. */
function callsWriteTool(body: unknown): boolean {
  const messages = Array.isArray(body) ? (body as unknown[]) : [body];
  return messages.some((message) => {
    if (typeof message !== "object" || message === null) return false;
    const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
    return method === "tools/call" && typeof params?.name === "string" && WRITE_TOOLS.has(params.name);
  });
}

async function parsedBody(request: Request): Promise<{ body: unknown } | null> {
  try {
    return { body: JSON.parse(await request.text()) as unknown };
  } catch {
    return null;
  }
}

export async function handleMcpRequest(request: Request): Promise<Response> {
  const principal: Principal = await authenticateToken(request, MCP_AUDIENCE);
  const parsed = await parsedBody(request);
  if (parsed === null) return json(PARSE_ERROR, 400);
  if (callsWriteTool(parsed.body) && !allows(principal.scopes, "readwrite")) throw insufficientScope();

  const server = mcpServer(principal, request);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    return await transport.handleRequest(request, {
      parsedBody: parsed.body,
      authInfo: { token: "", clientId: String(principal.clientId), scopes: [...principal.scopes] },
    });
  } finally {
    await server.close();
  }
}
