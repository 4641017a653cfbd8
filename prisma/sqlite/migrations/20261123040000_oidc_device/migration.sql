-- AlterTable
ALTER TABLE "Grant" ADD COLUMN "authTime" DATETIME;
ALTER TABLE "Grant" ADD COLUMN "nonce" TEXT;

-- CreateTable
CREATE TABLE "SigningKey" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "kid" TEXT NOT NULL,
    "generation" INTEGER NOT NULL,
    "alg" TEXT NOT NULL,
    "publicJwk" TEXT NOT NULL,
    "privateJwe" TEXT,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" DATETIME
);

-- CreateTable
CREATE TABLE "DeviceAuthorization" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "deviceCodeDigest" TEXT NOT NULL,
    "userCode" TEXT NOT NULL,
    "clientId" INTEGER NOT NULL,
    "scopes" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "userId" INTEGER,
    "authTime" DATETIME,
    "interval" INTEGER NOT NULL DEFAULT 5,
    "lastPolledAt" DATETIME,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL,
    "decidedAt" DATETIME,
    "usedAt" DATETIME,
    CONSTRAINT "DeviceAuthorization_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "Client" ("id") ON DELETE CASCADE ON UPDATE CASCADE,
    CONSTRAINT "DeviceAuthorization_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "SigningKey_kid_key" ON "SigningKey"("kid");

-- CreateIndex
CREATE UNIQUE INDEX "SigningKey_generation_key" ON "SigningKey"("generation");

-- CreateIndex
CREATE UNIQUE INDEX "DeviceAuthorization_deviceCodeDigest_key" ON "DeviceAuthorization"("deviceCodeDigest");

-- CreateIndex
CREATE UNIQUE INDEX "DeviceAuthorization_userCode_key" ON "DeviceAuthorization"("userCode");

-- CreateIndex
CREATE INDEX "DeviceAuthorization_clientId_idx" ON "DeviceAuthorization"("clientId");

-- CreateIndex
CREATE INDEX "DeviceAuthorization_userId_idx" ON "DeviceAuthorization"("userId");

-- CreateIndex
CREATE INDEX "DeviceAuthorization_expiresAt_idx" ON "DeviceAuthorization"("expiresAt");
