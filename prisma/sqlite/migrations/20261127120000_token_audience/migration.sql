-- RFC 8707 resource indicators: every access and refresh token stores the resource it is for, as a path of
-- APP_URL ("/api" or "/api/mcp"; docs/rules/agents.md#audience). Tokens issued before were all for the API.
-- An authorization code keeps the resource its authorization request named (null: none).
ALTER TABLE "AccessToken" ADD COLUMN "audience" TEXT NOT NULL DEFAULT '/api';
ALTER TABLE "RefreshToken" ADD COLUMN "audience" TEXT NOT NULL DEFAULT '/api';
ALTER TABLE "AuthorizationCode" ADD COLUMN "audience" TEXT;
