-- CreateTable
CREATE TABLE "AccountToken" (
    "id" INTEGER NOT NULL PRIMARY KEY AUTOINCREMENT,
    "digest" TEXT NOT NULL,
    "userId" INTEGER NOT NULL,
    "purpose" TEXT NOT NULL,
    "email" TEXT NOT NULL,
    "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiresAt" DATETIME NOT NULL,
    "usedAt" DATETIME,
    CONSTRAINT "AccountToken_userId_fkey" FOREIGN KEY ("userId") REFERENCES "User" ("id") ON DELETE CASCADE ON UPDATE CASCADE
);

-- CreateIndex
CREATE UNIQUE INDEX "AccountToken_digest_key" ON "AccountToken"("digest");

-- CreateIndex
CREATE INDEX "AccountToken_userId_purpose_idx" ON "AccountToken"("userId", "purpose");

-- CreateIndex
CREATE INDEX "AccountToken_expiresAt_idx" ON "AccountToken"("expiresAt");

-- AlterTable
ALTER TABLE "PermissionRequest" ADD COLUMN "allowedNamedByEmail" BOOLEAN NOT NULL DEFAULT false;

-- DropIndex
DROP INDEX "PermissionRequest_userTargetId_idx";

-- CreateIndex
CREATE INDEX "PermissionRequest_userTargetId_createdAt_idx" ON "PermissionRequest"("userTargetId", "createdAt");

-- AlterTable
ALTER TABLE "MailMessage" ADD COLUMN "kind" TEXT;
ALTER TABLE "MailMessage" ADD COLUMN "redactedText" TEXT;
ALTER TABLE "MailMessage" ADD COLUMN "redactedHtml" TEXT;
ALTER TABLE "MailMessage" ADD COLUMN "permissionRequestId" INTEGER REFERENCES "PermissionRequest" ("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "MailMessage" ADD COLUMN "accountTokenId" INTEGER REFERENCES "AccountToken" ("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- CreateIndex
CREATE INDEX "MailMessage_permissionRequestId_idx" ON "MailMessage"("permissionRequestId");

-- CreateIndex
CREATE INDEX "MailMessage_accountTokenId_idx" ON "MailMessage"("accountTokenId");
