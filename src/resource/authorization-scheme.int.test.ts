// The scheme of an Authorization header is case-insensitive (RFC 9110 11.1, RFC 9449 7.1): `bearer` is Bearer
// and `dpop` is DPoP (src/resource/authenticate.ts). A header that cannot be read answers 401 invalid_token on the
// challenge of the scheme it names: DPoP when it starts with "DPoP ", else Bearer (docs/rules/tokens.md#dpop).
import { describe, expect, it } from "vitest";
import { call } from "@/testing/app";
import { dpopKey, proof } from "@/testing/dpop";
import { makeClient, makeUser, passwordSession } from "@/testing/factories";

const ISS = "http://localhost:3000";
const RM = `resource_metadata="${ISS}/.well-known/oauth-protected-resource/api"`;
const challenge = (on: "Bearer" | "DPoP" | null) =>
  `Bearer realm="api", ${RM}${on === "Bearer" ? ', error="invalid_token"' : ""}, DPoP realm="api", algs="ES256 RS256", ${RM}${on === "DPoP" ? ', error="invalid_token"' : ""}`;

describe("the scheme of the Authorization header", () => {
  it("is read in any case: an unbound token as bearer or BEARER, a bound one as dpop with its proof", async () => {
    const { user, accessToken } = await passwordSession("readonly");
    for (const scheme of ["bearer", "BEARER", "Bearer"]) {
      const res = await call("GET", `/api/user/${user.id}/`, { headers: { authorization: `${scheme} ${accessToken}` } });
      expect({ scheme, status: res.status, body: res.json }).toEqual({ scheme, status: 200, body: { id: user.id, resource_uri: `/api/user/${user.id}/`, name: user.name, email: user.email } });
    }

    const owner = await makeUser();
    const client = await makeClient({ ownerId: owner.id });
    const key = await dpopKey();
    const issued = await call("POST", "/api/connect/oauth2/token/", {
      body: { grant_type: "password", client_id: client.client_id, client_secret: client.client_secret, username: owner.email, password: owner.password, scope: "readonly" },
      headers: { dpop: await proof(key, { url: `${ISS}/api/connect/oauth2/token/` }) },
    });
    expect({ status: issued.status, type: issued.json.token_type }).toEqual({ status: 200, type: "DPoP" });
    const bound = issued.json.access_token as string;
    const path = `/api/user/${owner.id}/`;
    for (const scheme of ["dpop", "DPOP"]) {
      const res = await call("GET", path, { headers: { authorization: `${scheme} ${bound}`, dpop: await proof(key, { method: "GET", url: `${ISS}${path}`, accessToken: bound }) } });
      expect({ scheme, status: res.status, body: res.json }).toEqual({ scheme, status: 200, body: { id: owner.id, resource_uri: path, name: owner.name, email: owner.email } });
    }
  });

  it("answers a header it cannot read with invalid_token on the challenge of the scheme the header names", async () => {
    const { user, accessToken } = await passwordSession("readonly");
    const cases: [string, "Bearer" | "DPoP"][] = [
      [`DPoP ${accessToken} extra`, "DPoP"],
      [`dpop ${accessToken} extra`, "DPoP"],
      ["DPoP not*a*token", "DPoP"],
      [`Bearer ${accessToken} extra`, "Bearer"],
      [`Basic ${accessToken}`, "Bearer"],
      [`DPoP${accessToken}`, "Bearer"],
      [`Bearer dpop ${accessToken}`, "Bearer"],
      [`Token Bearer ${accessToken}`, "Bearer"],
    ];
    for (const [authorization, on] of cases) {
      const res = await call("GET", `/api/user/${user.id}/`, { headers: { authorization } });
      expect({ authorization, status: res.status, challenge: res.headers.get("www-authenticate"), body: res.json }).toEqual({
        authorization,
        status: 401,
        challenge: challenge(on),
        body: { error: "invalid or expired token" },
      });
    }
  });
});
