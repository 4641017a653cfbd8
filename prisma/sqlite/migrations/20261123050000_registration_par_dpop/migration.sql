-- Clients that register themselves (docs/rules/tokens.md#dynamic-registration). A client's owner becomes optional (a client that registered itself has none):
-- SQLite changes a column's NOT NULL only by rebuilding the table. The runner applies migrations with
-- foreign keys off and checks them before it commits (SQLite's documented procedure for ALTER TABLE), so
-- dropping the old table cascades to nothing.

-- RedefineTable
CREATE TABLE "new_Client" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "clientId" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "ownerId" INTEGER,
    "grantType" TEXT NOT NULL,
    "isPublic" BOOLEAN NOT NULL DEFAULT false,
    "firstParty" BOOLEAN NOT NULL DEFAULT false,
    "secretDigest" TEXT,
    "redirectUris" TEXT NOT NULL DEFAULT '[]',
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "requirePar" BOOLEAN NOT NULL DEFAULT false,
    "registeredVia" TEXT,
    "registrationTokenDigest" TEXT,
    "tokenEndpointAuthMethod" TEXT,
    "scope" TEXT,
    "clientUri" TEXT,
    "logoUri" TEXT,
    CONSTRAINT "Client_ownerId_fkey" FOREIGN KEY ("ownerId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);
INSERT INTO "new_Client" ("id", "clientId", "name", "ownerId", "grantType", "isPublic", "firstParty", "secretDigest", "redirectUris", "createdAt")
SELECT "id", "clientId", "name", "ownerId", "grantType", "isPublic", "firstParty", "secretDigest", "redirectUris", "createdAt" FROM "Client";
DROP TABLE "Client";
ALTER TABLE "new_Client" RENAME TO "Client";
CREATE UNIQUE INDEX "Client_clientId_key" ON "Client"("clientId");
CREATE UNIQUE INDEX "Client_registrationTokenDigest_key" ON "Client"("registrationTokenDigest");
CREATE INDEX "Client_ownerId_idx" ON "Client"("ownerId");

-- AlterTable
ALTER TABLE "AccessToken" ADD COLUMN "jkt" TEXT;
ALTER TABLE "RefreshToken" ADD COLUMN "jkt" TEXT;

-- CreateTable
CREATE TABLE "RegistrationToken" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "digest" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL,
    "usedAt" DATETIME
);

-- CreateTable
CREATE TABLE "PushedAuthorizationRequest" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "digest" TEXT NOT NULL,
    "clientId" INTEGER NOT NULL,
    "params" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL,
    "usedAt" DATETIME,
    CONSTRAINT "PushedAuthorizationRequest_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "Client" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateTable
CREATE TABLE "DpopProof" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "key" TEXT NOT NULL,
    "expiresAt" DATETIME NOT NULL
);

-- CreateIndex
CREATE UNIQUE INDEX "RegistrationToken_digest_key" ON "RegistrationToken"("digest");
CREATE INDEX "RegistrationToken_expiresAt_idx" ON "RegistrationToken"("expiresAt");
CREATE UNIQUE INDEX "PushedAuthorizationRequest_digest_key" ON "PushedAuthorizationRequest"("digest");
CREATE INDEX "PushedAuthorizationRequest_expiresAt_idx" ON "PushedAuthorizationRequest"("expiresAt");
CREATE UNIQUE INDEX "DpopProof_key_key" ON "DpopProof"("key");
CREATE INDEX "DpopProof_expiresAt_idx" ON "DpopProof"("expiresAt");
