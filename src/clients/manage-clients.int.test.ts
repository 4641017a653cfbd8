import { describe, expect, it } from "vitest";
import { deleteOwnClient, listOwnClients, rotateClientSecret } from "@/clients/manage-clients";
import { call } from "@/testing/app";
import { db } from "@/db/client";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";

/** The client's audit events after its creation (client.created is the factory's, recorded by createClient). */
const events = async (clientId: string) =>
  (await (await db()).auditEvent.findMany({ where: { clientId, type: { not: "client.created" } }, orderBy: { id: "asc" } })).map((event) => ({ type: event.type, userId: event.userId }));

const passwordGrant = (clientId: string, secret: string, user: { email: string; password: string }) =>
  call("POST", "/api/connect/oauth2/token/", { body: { grant_type: "password", client_id: clientId, client_secret: secret, username: user.email, password: user.password } });

describe("managing one's own clients (/settings/clients)", () => {
  it("rotating the secret: the new one works at once and the old one stops", async () => {
    const user = await makeUser();
    const client = await makeClient({ ownerId: user.id });
    const secret = await rotateClientSecret({ ownerId: user.id, clientId: client.client_id });
    expect(secret).not.toBe(client.client_secret);
    expect((await passwordGrant(client.client_id, client.client_secret!, user)).status).toBe(401);
    expect((await passwordGrant(client.client_id, secret, user)).status).toBe(200);
    expect((await events(client.client_id)).filter((event) => event.type.startsWith("client."))).toEqual([{ type: "client.secret_rotated", userId: user.id }]);
  });

  it("only the owner can rotate or delete, and a public client has no secret to rotate", async () => {
    const owner = await makeUser();
    const other = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    await expect(rotateClientSecret({ ownerId: other.id, clientId: client.client_id })).rejects.toMatchObject({ status: 404 });
    await expect(deleteOwnClient({ ownerId: other.id, clientId: client.client_id })).rejects.toMatchObject({ status: 404 });
    expect(await events(client.client_id)).toEqual([]);
    const publicClient = await makeClient({ ownerId: owner.id, grantType: "authorization_code", isPublic: true });
    await expect(rotateClientSecret({ ownerId: owner.id, clientId: publicClient.client_id })).rejects.toMatchObject({ status: 400 });
    expect((await listOwnClients(owner.id)).map((c) => c.client_id).sort()).toEqual([client.client_id, publicClient.client_id].sort());
    expect(await listOwnClients(other.id)).toEqual([]);
  });

  it("deleting a client ends every token it held", async () => {
    const session = await passwordSession();
    await deleteOwnClient({ ownerId: session.user.id, clientId: session.client.client_id });
    expect((await call("GET", `/api/user/${session.user.id}/`, { token: session.accessToken })).status).toBe(401);
    expect((await passwordGrant(session.client.client_id, session.client.client_secret!, session.user)).status).toBe(401);
    expect((await events(session.client.client_id)).filter((event) => event.type.startsWith("client."))).toEqual([{ type: "client.deleted", userId: session.user.id }]);
  });
});
