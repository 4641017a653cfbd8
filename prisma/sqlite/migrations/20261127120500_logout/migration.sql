-- OpenID Connect logout (docs/rules/openid-connect.md#logout, docs/rules/openid-connect.md#back-channel-logout):
-- a client's post-logout redirect URIs and back-channel logout URI, the browser session of a grant, which
-- client received an id_token in which session, and the queue of logout tokens.

-- AlterTable
ALTER TABLE "Client" ADD COLUMN "postLogoutRedirectUris" TEXT NOT NULL DEFAULT '[]';
ALTER TABLE "Client" ADD COLUMN "backchannelLogoutUri" TEXT;
ALTER TABLE "Grant" ADD COLUMN "sid" TEXT;

-- CreateTable
CREATE TABLE "SessionClient" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "sid" TEXT NOT NULL,
    "userId" INTEGER NOT NULL,
    "clientId" INTEGER NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "endedAt" DATETIME,
    CONSTRAINT "SessionClient_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "SessionClient_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "Client" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "LogoutDelivery" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "clientId" INTEGER NOT NULL,
    "sub" TEXT NOT NULL,
    "sid" TEXT NOT NULL,
    "jti" TEXT NOT NULL,
    "status" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "nextAttemptAt" DATETIME NOT NULL,
    "claimedAt" DATETIME,
    "sentAt" DATETIME,
    "lastError" TEXT,
    CONSTRAINT "LogoutDelivery_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "Client" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "SessionClient_sid_clientId_key" ON "SessionClient"("sid", "clientId");
CREATE INDEX "SessionClient_userId_idx" ON "SessionClient"("userId");
CREATE INDEX "SessionClient_clientId_idx" ON "SessionClient"("clientId");
CREATE UNIQUE INDEX "LogoutDelivery_jti_key" ON "LogoutDelivery"("jti");
CREATE INDEX "LogoutDelivery_status_nextAttemptAt_idx" ON "LogoutDelivery"("status", "nextAttemptAt");
CREATE INDEX "LogoutDelivery_clientId_idx" ON "LogoutDelivery"("clientId");
