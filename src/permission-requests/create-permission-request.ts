// POST /api/bundle_permission_request/ (SPEC.md 4.4, CONTRACT.md 6). Any authenticated user asks the owner
// of a bundle (user_target) to let a user (user_allowed) in. The request and its e-mail are written in one
// transaction; the e-mail carries the only copy of the token, which is stored as its digest.
import { deliverSoon } from "@/email/deliver-soon";
import { enqueueMail } from "@/email/outbox";
import { formatExpiry, renderPermissionRequestMail } from "@/email/permission-request-mail";
import { nowMs } from "@/clock";
import { env } from "@/env";
import { ApiError, badRequest, conflict, tooManyRequests } from "@/http/errors";
import { parseInput } from "@/http/validate";
import type { Principal } from "@/http/auth";
import { digest, randomSecret } from "@/server/crypto";
import { db, write, type Tx } from "@/server/db";
import { findUserByReference } from "@/users/user-reference";
import { REQUEST_INCLUDE, representPermissionRequest } from "@/permission-requests/represent";
import { ZCreatePermissionRequest } from "@/permission-requests/schemas";

export const CREATE_LIMIT = 20;
export const CREATE_WINDOW_MS = 3600 * 1000;

export const CANNOT_GRANT = "user_target: cannot grant access to this bundle";
export const ALREADY_HAS_ACCESS = "user_allowed: already has access to this bundle";
export const ALREADY_PENDING = "a pending request for this bundle, user_allowed and user_target already exists";

/**
 * Serialises one requester's creates, so that the hourly count below is exact under concurrency. On
 * PostgreSQL: a row lock on the requester (NO KEY UPDATE does not block foreign-key checks against the row).
 * On SQLite the transaction's first statement is a write, which already serialises it with every writer.
 */
async function lockRequester(tx: Tx, userId: number): Promise<void> {
  if (env().database.kind === "postgresql") {
    await tx.$executeRaw`SELECT 1 FROM "User" WHERE "id" = ${userId} FOR NO KEY UPDATE`;
  }
}

/** 429 once the requester made CREATE_LIMIT requests in the last hour; Retry-After when the oldest leaves. */
async function assertUnderLimit(tx: Tx, requesterId: number, atMs: number): Promise<void> {
  const recent = await tx.permissionRequest.findMany({
    where: { requestedById: requesterId, createdAt: { gt: new Date(atMs - CREATE_WINDOW_MS) } },
    orderBy: { createdAt: "desc" },
    take: CREATE_LIMIT,
    select: { createdAt: true },
  });
  if (recent.length < CREATE_LIMIT) return;
  const oldest = recent[CREATE_LIMIT - 1]!.createdAt.getTime();
  throw tooManyRequests((oldest + CREATE_WINDOW_MS - atMs) / 1000);
}

export async function createPermissionRequest(options: { principal: Principal; body: Record<string, unknown> }) {
  const { principal } = options;
  const input = parseInput(ZCreatePermissionRequest, options.body);
  const client = await db();

  // Who owns what is not revealed: an unknown target and one who is not the owner answer the same.
  const bundle = await client.bundle.findUnique({ where: { id: input.bundle } });
  if (!bundle) throw badRequest("bundle: no such bundle");
  const target = await findUserByReference(input.user_target);
  if (!target || target.id !== bundle.ownerId) throw badRequest(CANNOT_GRANT);
  const allowed = await findUserByReference(input.user_allowed);
  if (!allowed) throw badRequest("user_allowed: no such user");
  const hasAccess =
    allowed.id === bundle.ownerId ||
    (await client.bundlePermission.count({ where: { bundleId: bundle.id, userAllowedId: allowed.id } })) > 0;
  if (hasAccess) throw conflict(ALREADY_HAS_ACCESS);
  const requester = await client.user.findUniqueOrThrow({ where: { id: principal.userId } });

  // Everything but database calls happens before the transaction: the token, the link, the rendered mail.
  const token = randomSecret();
  const createdAtMs = nowMs();
  const createdAt = new Date(createdAtMs);
  const expiresAt = new Date(createdAtMs + input.ttl * 1000);
  const link = new URL(input.redeem_url);
  link.searchParams.set("token", token);
  const mail = await renderPermissionRequestMail(target.email, {
    targetName: target.name,
    requesterName: requester.name,
    allowedName: allowed.name,
    requesterIsAllowed: requester.id === allowed.id,
    bundleName: bundle.name,
    link: link.href,
    expiresAt: formatExpiry(expiresAt),
  });
  const pendingKey = `${bundle.id}:${allowed.id}:${target.id}`;

  let created;
  try {
    created = await write(async (tx) => {
      await lockRequester(tx, requester.id);
      // A pending request that expired still holds the key; it no longer blocks a new one.
      await tx.permissionRequest.updateMany({ where: { pendingKey, expiresAt: { lte: createdAt } }, data: { pendingKey: null } });
      await assertUnderLimit(tx, requester.id, createdAtMs);
      const row = await tx.permissionRequest.create({
        data: {
          tokenDigest: digest(token),
          bundleId: bundle.id,
          userAllowedId: allowed.id,
          userTargetId: target.id,
          requestedById: requester.id,
          clientId: principal.clientId,
          redeemUrl: input.redeem_url,
          ttl: input.ttl,
          status: "pending",
          pendingKey,
          createdAt,
          expiresAt,
        },
        include: REQUEST_INCLUDE,
      });
      const mailId = await enqueueMail(tx, mail);
      return { row, mailId };
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The unique pendingKey: an equal request is pending (also when two creates race).
    if ((error as { code?: string }).code === "P2002") throw conflict(ALREADY_PENDING);
    throw error;
  }
  deliverSoon([created.mailId]);
  return representPermissionRequest(created.row, principal.userId, createdAtMs);
}
