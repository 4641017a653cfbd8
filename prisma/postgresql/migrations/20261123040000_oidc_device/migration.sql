-- AlterTable
ALTER TABLE "Grant" ADD COLUMN "authTime" TIMESTAMP(3),
ADD COLUMN "nonce" TEXT;

-- CreateTable
CREATE TABLE "SigningKey" (
    "id" SERIAL NOT NULL,
    "kid" TEXT NOT NULL,
    "generation" INTEGER NOT NULL,
    "alg" TEXT NOT NULL,
    "publicJwk" TEXT NOT NULL,
    "privateJwe" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "retiredAt" TIMESTAMP(3),

    CONSTRAINT "SigningKey_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DeviceAuthorization" (
    "id" SERIAL NOT NULL,
    "deviceCodeDigest" TEXT NOT NULL,
    "userCode" TEXT NOT NULL,
    "clientId" INTEGER NOT NULL,
    "scopes" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "userId" INTEGER,
    "authTime" TIMESTAMP(3),
    "interval" INTEGER NOT NULL DEFAULT 5,
    "lastPolledAt" TIMESTAMP(3),
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "decidedAt" TIMESTAMP(3),
    "usedAt" TIMESTAMP(3),

    CONSTRAINT "DeviceAuthorization_pkey" PRIMARY KEY ("id")
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

-- AddForeignKey
ALTER TABLE "DeviceAuthorization" ADD CONSTRAINT "DeviceAuthorization_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "Client"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "DeviceAuthorization" ADD CONSTRAINT "DeviceAuthorization_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;
