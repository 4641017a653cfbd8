// The sign-in page's "to continue to <app>" (docs/rules/pages.md#sign-in): read from the way back after
// sign-in.
import { describe, expect, it } from "vitest";
import { call } from "@/testing/app";
import { makeClient, makeUser } from "@/testing/factories";
import { signInPurpose } from "@/consent/sign-in-purpose";

describe("signInPurpose()", () => {
  it("names the client of an authorization request, with or without the trailing slash", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code", name: "Photo Printer" });
    for (const path of ["/api/connect/oauth2/auth/", "/api/connect/oauth2/auth"]) {
      expect(await signInPurpose(`${path}?response_type=code&client_id=${client.client_id}&scope=readonly`)).toEqual({ kind: "app", appName: "Photo Printer" });
    }
  });

  it("names nothing for an unknown or repeated client_id, or any other page", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "authorization_code" });
    expect(await signInPurpose("/api/connect/oauth2/auth/?client_id=nope")).toBeNull();
    expect(await signInPurpose(`/api/connect/oauth2/auth/?client_id=${client.client_id}&client_id=${client.client_id}`)).toBeNull();
    expect(await signInPurpose(`/settings/apps?client_id=${client.client_id}`)).toBeNull();
    expect(await signInPurpose("/")).toBeNull();
  });

  it("names the app of a pending device code, and only says 'a device' for any other code", async () => {
    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id, grantType: "device_code", name: "Living Room TV", isPublic: true, redirectUris: [] });
    const started = await call("POST", "/api/connect/oauth2/device/", { body: { client_id: client.client_id, scope: "readonly" } });
    expect(started.status).toBe(200);
    const userCode = (started.json as { user_code: string }).user_code;
    expect(await signInPurpose(`/device?user_code=${userCode.toLowerCase().replace("-", "")}`)).toEqual({ kind: "device", appName: "Living Room TV" });
    expect(await signInPurpose("/device?user_code=BCDF-GHJK")).toEqual({ kind: "device", appName: null });
    expect(await signInPurpose("/device")).toEqual({ kind: "device", appName: null });
  });
});
