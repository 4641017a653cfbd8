-- Registered clients' rows kept under the token cache's lease (src/db/pg-token-cache.ts): any change or
-- deletion of such a row tells every instance and holds the writing commit's completion back, through the
-- token cache's own function (20261124000000_token_cache), which empties tokens, clients and pages. A metadata
-- document's row (src/client-metadata-documents) is never kept, and refreshing it notifies nothing.
-- TRUNCATE "Client" already notifies (20261124000000_token_cache).
CREATE TRIGGER "Client_client_cache" AFTER UPDATE OR DELETE ON "Client"
  FOR EACH ROW WHEN (OLD."metadataDocumentExpiresAt" IS NULL) EXECUTE FUNCTION "token_cache_invalidate"();
