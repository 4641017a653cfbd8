-- Client authentication with a signed JWT (RFC 7523 2.2, docs/rules/tokens.md#client-assertions): a client's
-- public keys, and the jti of every assertion used, kept until it expires so that no instance takes it twice.
ALTER TABLE "Client" ADD COLUMN "jwks" TEXT;

-- CreateTable
CREATE TABLE "ClientAssertion" (
    "id" SERIAL NOT NULL,
    "key" TEXT NOT NULL,
    "expiresAt" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "ClientAssertion_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "ClientAssertion_key_key" ON "ClientAssertion"("key");
CREATE INDEX "ClientAssertion_expiresAt_idx" ON "ClientAssertion"("expiresAt");
