-- AlterTable
ALTER TABLE "User" ADD COLUMN "emailVerifiedAt" DATETIME;

-- Accounts made before verification existed keep working: their addresses count as confirmed.
UPDATE "User" SET "emailVerifiedAt" = "createdAt";
