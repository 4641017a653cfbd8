-- Clients that register themselves (docs/rules/tokens.md#dynamic-registration): a client's owner becomes optional (a client that registered itself has none).

-- AlterTable
ALTER TABLE "Client" ALTER COLUMN "ownerId" DROP NOT NULL,
ADD COLUMN "requirePar" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN "registeredVia" TEXT,
ADD COLUMN "registrationTokenDigest" TEXT,
ADD COLUMN "tokenEndpointAuthMethod" TEXT,
ADD COLUMN "scope" TEXT,
ADD COLUMN "clientUri" TEXT,
ADD COLUMN "logoUri" TEXT;

-- AlterTable
ALTER TABLE "AccessToken" ADD COLUMN "jkt" TEXT;
ALTER TABLE "RefreshToken" ADD COLUMN "jkt" TEXT;

-- CreateTable
CREATE TABLE "RegistrationToken" (
    "id" SERIAL NOT NULL,
    "digest" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),

    CONSTRAINT "RegistrationToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "PushedAuthorizationRequest" (
    "id" SERIAL NOT NULL,
    "digest" TEXT NOT NULL,
    "clientId" INTEGER NOT NULL,
    "params" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),

    CONSTRAINT "PushedAuthorizationRequest_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "DpopProof" (
    "id" SERIAL NOT NULL,
    "key" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "DpopProof_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "Client_registrationTokenDigest_key" ON "Client"("registrationTokenDigest");
CREATE UNIQUE INDEX "RegistrationToken_digest_key" ON "RegistrationToken"("digest");
CREATE INDEX "RegistrationToken_expiresAt_idx" ON "RegistrationToken"("expiresAt");
CREATE UNIQUE INDEX "PushedAuthorizationRequest_digest_key" ON "PushedAuthorizationRequest"("digest");
CREATE INDEX "PushedAuthorizationRequest_expiresAt_idx" ON "PushedAuthorizationRequest"("expiresAt");
CREATE UNIQUE INDEX "DpopProof_key_key" ON "DpopProof"("key");
CREATE INDEX "DpopProof_expiresAt_idx" ON "DpopProof"("expiresAt");

-- AddForeignKey
ALTER TABLE "PushedAuthorizationRequest" ADD CONSTRAINT "PushedAuthorizationRequest_clientId_fkey" FOREIGN KEY ("clientId") REFERENCES "Client"("id") ON DELETE CASCADE ON UPDATE CASCADE;
