-- A registered client's application_type (OpenID Connect Registration 2, docs/rules/tokens.md#redirect-uris),
-- and for a client named by a client ID metadata document (docs/rules/tokens.md#client-id-metadata-documents)
-- when the copy of its document held in its row stops being fresh.
ALTER TABLE "Client" ADD COLUMN "applicationType" TEXT NOT NULL DEFAULT 'web';
ALTER TABLE "Client" ADD COLUMN "metadataDocumentExpiresAt" TIMESTAMP(3);
