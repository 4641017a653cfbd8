-- CreateTable
CREATE TABLE "AccountToken" (
    "id" SERIAL NOT NULL,
    "digest" TEXT NOT NULL,
    "userId" INTEGER NOT NULL,
    "purpose" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" TIMESTAMP(3) NOT NULL,
    "usedAt" TIMESTAMP(3),

    CONSTRAINT "AccountToken_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "AccountToken_digest_key" ON "AccountToken"("digest");

-- CreateIndex
CREATE INDEX "AccountToken_userId_purpose_idx" ON "AccountToken"("userId", "purpose");

-- CreateIndex
CREATE INDEX "AccountToken_expiresAt_idx" ON "AccountToken"("expiresAt");

-- AddForeignKey
ALTER TABLE "AccountToken" ADD CONSTRAINT "AccountToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AlterTable
ALTER TABLE "PermissionRequest" ADD COLUMN "allowedNamedByEmail" BOOLEAN NOT NULL DEFAULT false;

-- DropIndex
DROP INDEX "PermissionRequest_userTargetId_idx";

-- CreateIndex
CREATE INDEX "PermissionRequest_userTargetId_createdAt_idx" ON "PermissionRequest"("userTargetId", "createdAt");

-- AlterTable
ALTER TABLE "MailMessage" ADD COLUMN "kind" TEXT,
ADD COLUMN "redactedText" TEXT,
ADD COLUMN "redactedHtml" TEXT,
ADD COLUMN "permissionRequestId" INTEGER,
ADD COLUMN "accountTokenId" INTEGER;

-- CreateIndex
CREATE INDEX "MailMessage_permissionRequestId_idx" ON "MailMessage"("permissionRequestId");

-- CreateIndex
CREATE INDEX "MailMessage_accountTokenId_idx" ON "MailMessage"("accountTokenId");

-- AddForeignKey
ALTER TABLE "MailMessage" ADD CONSTRAINT "MailMessage_permissionRequestId_fkey" FOREIGN KEY ("permissionRequestId") REFERENCES "PermissionRequest"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "MailMessage" ADD CONSTRAINT "MailMessage_accountTokenId_fkey" FOREIGN KEY ("accountTokenId") REFERENCES "AccountToken"("id") ON DELETE CASCADE ON UPDATE CASCADE;
