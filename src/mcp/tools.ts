// The tools of the Model Context Protocol server (docs/rules/agents.md#tools): each calls the domain function
// the API's endpoint calls, as the token's user, with inputs named as the API's fields, and answers what the
// endpoint answers as structured content (MCP 2025-11-25, server/tools: outputSchema, structuredContent). A
// refusal is the endpoint's status and error, as a tool error (isError): the rules of
// docs/rules/permission-requests.md hold through the tools unchanged. No tool redeems a permission request,
// and no result holds a redeem token: an agent may ask, only a person who opens the mail may accept.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { listBundlePermissions } from "@/bundle-permissions/list-bundle-permissions";
import { createBundle } from "@/bundles/create-bundle";
import { listBundles } from "@/bundles/list-bundles";
import { DEFAULT_LIMIT, MAX_LIMIT, type PageRequest } from "@/http/collection";
import { errorResponse } from "@/http/route";
import { createPermissionRequest } from "@/permission-requests/create-permission-request";
import { deletePermissionRequest } from "@/permission-requests/delete-permission-request";
import { listPermissionRequests } from "@/permission-requests/list-permission-requests";
import type { Principal } from "@/resource/authenticate";
import { getUser } from "@/users/get-user";
import { SERVICE_NAME } from "@/site";

/** Tools that change something: they need the readwrite scope (docs/rules/agents.md#scopes-and-step-up). */
export const WRITE_TOOLS: ReadonlySet<string> = new Set(["create_bundle", "request_bundle_access", "withdraw_permission_request"]);

const reference = (what: string) =>
  z.union([z.string().max(2048), z.number().int()]).describe(what);

const paging = {
  limit: z.number().int().min(1).max(MAX_LIMIT).optional().describe(`How many (1 to ${MAX_LIMIT}, default ${DEFAULT_LIMIT})`),
  offset: z.number().int().min(0).optional().describe("How many to skip (default 0)"),
};

const record = z.object({ id: z.number(), resource_uri: z.string() }).passthrough();
const collection = z.object({
  meta: z.object({ limit: z.number(), offset: z.number(), total_count: z.number(), next: z.string().nullable(), previous: z.string().nullable() }),
  objects: z.array(z.record(z.string(), z.unknown())),
});

const page = (path: string, input: { limit?: number | undefined; offset?: number | undefined }): PageRequest => ({
  path,
  limit: input.limit ?? DEFAULT_LIMIT,
  offset: input.offset ?? 0,
});

/** A tool's answer: the value as structured content, and the same JSON as text for clients that read only text. */
function answer(value: unknown): CallToolResult {
  const content = JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  return { content: [{ type: "text", text: JSON.stringify(content) }], structuredContent: content };
}

/**
 * Runs a tool's domain call; a refusal becomes a tool error with the status and error the API answers for it
 * (src/http/route.ts errorResponse(), which also logs what the API logs).
 */
async function run(request: Request, call: () => unknown): Promise<CallToolResult> {
  try {
    return answer(await call());
  } catch (error) {
    const response = errorResponse(error, request, "api");
    const body = (await response.json()) as { error: string };
    const refusal = { status: response.status, error: body.error };
    return { isError: true, content: [{ type: "text", text: JSON.stringify(refusal) }], structuredContent: refusal };
  }
}

/** A server for one request, acting as `principal` (the server is stateless: one per HTTP request). */
export function mcpServer(principal: Principal, request: Request): McpServer {
  const server = new McpServer({ name: SERVICE_NAME, version: "1.0.0" }, { capabilities: { tools: {} } });
  const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false } as const;

  server.registerTool(
    "whoami",
    { title: "Who am I", description: "The user this agent acts for: resource_uri, name and e-mail (GET /api/user/<id>/).", outputSchema: record, annotations: readOnly },
    () => run(request, async () => getUser({ id: String(principal.userId), viewer: principal.user })),
  );
  server.registerTool(
    "list_bundles",
    { title: "List bundles", description: "The bundles the user owns or was let into, newest first (GET /api/bundle/).", inputSchema: paging, outputSchema: collection, annotations: readOnly },
    (input) => run(request, () => listBundles({ viewerId: principal.userId, page: page("/api/bundle/", input) })),
  );
  server.registerTool(
    "create_bundle",
    {
      title: "Create a bundle",
      description: "Creates a bundle the user owns (POST /api/bundle/). Needs the readwrite scope.",
      inputSchema: { name: z.string().max(1000).describe("The bundle's name (at most 200 characters)") },
      outputSchema: record,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input) => run(request, () => createBundle({ ownerId: principal.userId, name: input.name })),
  );
  server.registerTool(
    "list_permission_requests",
    { title: "List permission requests", description: "The permission requests the user sent or received, newest first (GET /api/bundle_permission_request/).", inputSchema: paging, outputSchema: collection, annotations: readOnly },
    (input) => run(request, () => listPermissionRequests({ viewerId: principal.userId, page: page("/api/bundle_permission_request/", input) })),
  );
  server.registerTool(
    "request_bundle_access",
    {
      title: "Ask for access to a bundle",
      description:
        "Asks the owner of a bundle (user_target) to let a user (user_allowed, by default the user this agent acts for) read it " +
        "(POST /api/bundle_permission_request/). The owner gets an e-mail with a single-use link; only a person who opens it can accept. Needs the readwrite scope.",
      inputSchema: {
        bundle: reference("The bundle: its URI (/api/bundle/<id>/) or id"),
        user_target: reference("The bundle's owner: a user URI (/api/user/<id>/), e-mail or id"),
        user_allowed: reference("Who should be let in: a user URI, e-mail or id (default: the user this agent acts for)").optional(),
      },
      outputSchema: record,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (input) =>
      run(request, () =>
        createPermissionRequest({
          principal,
          body: { bundle: input.bundle, user_target: input.user_target, user_allowed: input.user_allowed ?? principal.userId },
        }),
      ),
  );
  server.registerTool(
    "withdraw_permission_request",
    {
      title: "Withdraw a permission request",
      description: "Withdraws a pending permission request the user sent, or declines one the user received (DELETE /api/bundle_permission_request/<id>/). Needs the readwrite scope.",
      inputSchema: { id: z.number().int().min(1).describe("The request's id") },
      outputSchema: { id: z.number(), withdrawn: z.boolean() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    (input) =>
      run(request, async () => {
        await deletePermissionRequest({ id: input.id, viewerId: principal.userId });
        return { id: input.id, withdrawn: true };
      }),
  );
  server.registerTool(
    "list_shared_with_me",
    { title: "Bundles shared with me", description: "The bundle permissions that let the user into someone else's bundle, newest first.", inputSchema: paging, outputSchema: collection, annotations: readOnly },
    (input) => run(request, () => listBundlePermissions({ viewerId: principal.userId, page: page("/api/bundle_permission/", input), allowedOnly: true })),
  );
  return server;
}
