-- The collection-page cache on PostgreSQL (src/db/page-cache.ts, under the lease of src/db/pg-token-cache.ts).
-- Every change to what a page of bundles, bundle permissions or permission requests shows tells every
-- instance (pg_notify on "page_cache", delivered at commit, in commit order), which empties its page cache
-- only, and the writing session itself (a notice: the pool then holds the commit's completion back until no
-- instance can still answer from its cache). Once per transaction. A user's name or e-mail already notifies
-- "token_cache" (20261124000000_token_cache), which empties both caches.
CREATE FUNCTION "page_cache_invalidate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('app.page_cache_invalidated', true) IS DISTINCT FROM 'on' THEN
    PERFORM set_config('app.page_cache_invalidated', 'on', true);
    PERFORM pg_notify('page_cache', '');
    RAISE NOTICE 'page_cache: invalidated';
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "Bundle_page_cache" AFTER INSERT OR UPDATE OR DELETE ON "Bundle"
  FOR EACH ROW EXECUTE FUNCTION "page_cache_invalidate"();
CREATE TRIGGER "BundlePermission_page_cache" AFTER INSERT OR UPDATE OR DELETE ON "BundlePermission"
  FOR EACH ROW EXECUTE FUNCTION "page_cache_invalidate"();
CREATE TRIGGER "PermissionRequest_page_cache" AFTER INSERT OR UPDATE OR DELETE ON "PermissionRequest"
  FOR EACH ROW EXECUTE FUNCTION "page_cache_invalidate"();
-- TRUNCATE fires no row trigger.
CREATE TRIGGER "Bundle_page_cache_truncate" AFTER TRUNCATE ON "Bundle" FOR EACH STATEMENT EXECUTE FUNCTION "page_cache_invalidate"();
CREATE TRIGGER "BundlePermission_page_cache_truncate" AFTER TRUNCATE ON "BundlePermission" FOR EACH STATEMENT EXECUTE FUNCTION "page_cache_invalidate"();
CREATE TRIGGER "PermissionRequest_page_cache_truncate" AFTER TRUNCATE ON "PermissionRequest" FOR EACH STATEMENT EXECUTE FUNCTION "page_cache_invalidate"();
