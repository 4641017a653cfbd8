// POST /api/bundle_permission_request/ (docs/rules/permission-requests.md#creating-a-request). Any
// authenticated user asks the owner of a bundle (user_target) to let a user (user_allowed) in. The request and
// its e-mail are written in one transaction; the e-mail carries the only copy of the token, which is stored as
// its digest.
//
// Nothing in the answer may reveal who owns a bundle or who may read it
// (docs/rules/permission-requests.md#creating-a-request): every reference is resolved first (an unknown bundle
// or user_allowed is answered whoever is named as target); then every refusal that depends on ownership or
// access is the same 400 (CANNOT_GRANT): a target who is not the owner, is unknown, or has not confirmed their
// address, and, for anyone but the allowed user and the owner (who know it), a user_allowed who already has
// access or an equal pending request. Probing costs: refused creates count against the requester
// (REFUSED_LIMIT an hour, then every create is 429), and successes are limited per requester (CREATE_LIMIT)
// and per target (TARGET_LIMIT), so that nobody can use the service to flood a mailbox. Every limit is taken
// before the work it protects, in one atomic step (src/limits/limiter.ts), so that a burst sent at once passes
// at most the limit: each create takes a slot of the refusal limit before it looks anything up, kept only when
// it ends in a 400 or 409; the create and target slots are taken inside the transaction that writes the
// request, kept exactly when it commits.
import { recordEvent, recordEventInTx } from "@/audit/record-event";
import { deliverSoon } from "@/email/deliver-soon";
import { enqueueMail } from "@/email/outbox";
import { renderPermissionRequestMail } from "@/email/permission-request-mail";
import { formatDateTime } from "@/format/date-time";
import { nowMs } from "@/clock";
import { ApiError, badRequest, conflict } from "@/http/errors";
import { parseInput } from "@/http/validate";
import type { Principal } from "@/resource/authenticate";
import { isRateLimited, reserve, reserveInTx, type Limit, type Reservation } from "@/limits/limiter";
import { digest, randomSecret } from "@/secrets";
import { db, write } from "@/db/client";
import { maySeeEmail, permissionRequestContext } from "@/users/email-visibility";
import { findUserByReference } from "@/users/user-reference";
import { REQUEST_INCLUDE, representPermissionRequest } from "@/permission-requests/represent";
import { ZCreatePermissionRequest } from "@/permission-requests/schemas";

export const CREATE_WINDOW_MS = 3600 * 1000;
/** Successful creates per requester per hour. */
export const CREATE_LIMIT = 20;
/** Refused creates (400, 409) per requester per hour; then every create is 429 until the window passes. */
export const REFUSED_LIMIT = 60;
/** Requests naming one user_target per hour, whoever asks. */
export const TARGET_LIMIT = 20;

export const CANNOT_GRANT = "user_target: cannot grant access to this bundle";
export const ALREADY_HAS_ACCESS = "user_allowed: already has access to this bundle";
export const ALREADY_PENDING = "a pending request for this bundle, user_allowed and user_target already exists";

const hour = (max: number): Limit => ({ max, windowMs: CREATE_WINDOW_MS });
const refusedSlot = (userId: number) => ({ key: `permission_request_refused:${userId}`, limit: hour(REFUSED_LIMIT) });
const createSlot = (userId: number) => ({ key: `permission_request:${userId}`, limit: hour(CREATE_LIMIT) });
const targetSlot = (userId: number) => ({ key: `permission_request_target:${userId}`, limit: hour(TARGET_LIMIT) });

export async function createPermissionRequest(options: { principal: Principal; body: Record<string, unknown> }) {
  const { principal } = options;
  // A malformed body reveals nothing and is not counted.
  const input = parseInput(ZCreatePermissionRequest, options.body);
  let refusal: Reservation | null = null;
  try {
    refusal = await reserve([refusedSlot(principal.userId)]);
    return await create(principal, input, refusal);
  } catch (error) {
    // A refusal (400, 409) keeps its slot; anything else gives it back (a success already did, with its write).
    if (refusal && !(error instanceof ApiError && (error.status === 400 || error.status === 409))) await refusal.release();
    if (isRateLimited(error)) await recordEvent({ type: "rate_limited", userId: principal.userId, detail: { limit: "permission_request" } });
    throw error;
  }
}

async function create(principal: Principal, input: ReturnType<typeof ZCreatePermissionRequest.parse>, refusal: Reservation) {
  const client = await db();

  // Every reference first, whoever owns what.
  const [bundle, target, allowed, requester, oauthClient] = await Promise.all([
    client.bundle.findUnique({ where: { id: input.bundle } }),
    findUserByReference(input.user_target),
    findUserByReference(input.user_allowed),
    client.user.findUniqueOrThrow({ where: { id: principal.userId } }),
    principal.clientId === null ? null : client.client.findUnique({ where: { id: principal.clientId }, select: { clientId: true } }),
  ]);
  if (!bundle) throw badRequest("bundle: no such bundle");
  if (!allowed) throw badRequest("user_allowed: no such user");

  // From here every refusal depends on who owns or may read the bundle: the same 400, unless the requester
  // is the allowed user or the owner, who know the answer already.
  // Both facts are read before either is used, so that the refusals also take the same time.
  const mayKnow = requester.id === bundle.ownerId || requester.id === allowed.id;
  const permissions = await client.bundlePermission.count({ where: { bundleId: bundle.id, userAllowedId: allowed.id } });
  const hasAccess = allowed.id === bundle.ownerId || permissions > 0;
  if (!target || target.id !== bundle.ownerId || target.emailVerifiedAt === null) throw badRequest(CANNOT_GRANT);
  if (hasAccess) throw mayKnow ? conflict(ALREADY_HAS_ACCESS) : badRequest(CANNOT_GRANT);

  // Everything but database calls happens before the transaction: the token, the link, the rendered mail.
  const allowedNamedByEmail = "email" in input.user_allowed;
  const context = permissionRequestContext({ requestedById: requester.id, userTargetId: target.id, userAllowedId: allowed.id, allowedNamedByEmail });
  const token = randomSecret();
  const createdAtMs = nowMs();
  const createdAt = new Date(createdAtMs);
  const expiresAt = new Date(createdAtMs + input.ttl * 1000);
  const link = new URL(input.redeem_url);
  link.searchParams.set("token", token);
  const mail = await renderPermissionRequestMail(target.email, {
    targetName: target.name,
    requesterId: requester.id,
    requesterName: requester.name,
    requesterEmail: maySeeEmail(target.id, requester.id, context) ? requester.email : null,
    allowedId: allowed.id,
    allowedName: allowed.name,
    allowedEmail: maySeeEmail(target.id, allowed.id, context) ? allowed.email : null,
    requesterIsAllowed: requester.id === allowed.id,
    bundleName: bundle.name,
    link: link.href,
    expiresAt: formatDateTime(expiresAt),
  });
  const pendingKey = `${bundle.id}:${allowed.id}:${target.id}`;

  let created;
  try {
    created = await write(async (tx) => {
      // First: the create and target limits (on SQLite this insert takes the write lock for the transaction).
      await reserveInTx(tx, [createSlot(requester.id), targetSlot(target.id)]);
      // Not a refusal: its slot goes back with the write.
      await refusal.releaseInTx(tx);
      // A pending request that expired still holds the key; it no longer blocks a new one.
      await tx.permissionRequest.updateMany({ where: { pendingKey, expiresAt: { lte: createdAt } }, data: { pendingKey: null } });
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
          allowedNamedByEmail,
          status: "pending",
          pendingKey,
          createdAt,
          expiresAt,
        },
        include: REQUEST_INCLUDE,
      });
      const mailId = await enqueueMail(tx, mail, { permissionRequestId: row.id });
      await recordEventInTx(tx, {
        type: "permission_request.created",
        userId: requester.id,
        clientId: oauthClient?.clientId ?? null,
        detail: { request: row.id, bundle: bundle.id, target: target.id },
      });
      return { row, mailId };
    });
  } catch (error) {
    if (error instanceof ApiError) throw error;
    // The unique pendingKey: an equal request is pending (also when two creates race). Its parties may know.
    if ((error as { code?: string }).code === "P2002") {
      const pending = await client.permissionRequest.findUnique({ where: { pendingKey }, select: { requestedById: true } });
      throw mayKnow || pending?.requestedById === requester.id ? conflict(ALREADY_PENDING) : badRequest(CANNOT_GRANT);
    }
    throw error;
  }
  deliverSoon([created.mailId]);
  return representPermissionRequest(created.row, principal.userId, createdAtMs);
}
