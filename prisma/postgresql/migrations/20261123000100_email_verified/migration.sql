-- AlterTable
ALTER TABLE "User" ADD COLUMN "emailVerifiedAt" TIMESTAMP(3);

-- Accounts made before verification existed keep working: their addresses count as confirmed.
UPDATE "User" SET "emailVerifiedAt" = "createdAt";
