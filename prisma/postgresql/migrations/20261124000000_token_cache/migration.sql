-- The validated-token cache on PostgreSQL (src/db/pg-token-cache.ts). Every change that could make
-- a cached bearer token's answer wrong tells every instance (pg_notify, delivered at commit, in commit order)
-- and the writing session itself (a notice, before its statement completes: the pool then holds the commit's
-- completion back until no instance can still answer from its cache). Once per transaction. SQLite needs no
-- trigger: its instances ask the file's data_version (src/db/fast-sql.ts).
CREATE FUNCTION "token_cache_invalidate"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('app.token_cache_invalidated', true) IS DISTINCT FROM 'on' THEN
    PERFORM set_config('app.token_cache_invalidated', 'on', true);
    PERFORM pg_notify('token_cache', '');
    RAISE NOTICE 'token_cache: invalidated';
  END IF;
  RETURN NULL;
END
$$;

-- A token changed or deleted (revoked; or deleted with its grant, client or user, by cascade).
CREATE TRIGGER "AccessToken_token_cache" AFTER UPDATE OR DELETE ON "AccessToken"
  FOR EACH ROW EXECUTE FUNCTION "token_cache_invalidate"();
-- A grant revoked (or un-revoked).
CREATE TRIGGER "Grant_token_cache" AFTER UPDATE OF "revokedAt" ON "Grant"
  FOR EACH ROW WHEN (OLD."revokedAt" IS DISTINCT FROM NEW."revokedAt") EXECUTE FUNCTION "token_cache_invalidate"();
-- What the bearer read answers of the user and the client.
CREATE TRIGGER "User_token_cache" AFTER UPDATE OF "name", "email" ON "User"
  FOR EACH ROW WHEN (OLD."name" IS DISTINCT FROM NEW."name" OR OLD."email" IS DISTINCT FROM NEW."email") EXECUTE FUNCTION "token_cache_invalidate"();
CREATE TRIGGER "Client_token_cache" AFTER UPDATE OF "firstParty" ON "Client"
  FOR EACH ROW WHEN (OLD."firstParty" IS DISTINCT FROM NEW."firstParty") EXECUTE FUNCTION "token_cache_invalidate"();
-- TRUNCATE fires no row trigger.
CREATE TRIGGER "AccessToken_token_cache_truncate" AFTER TRUNCATE ON "AccessToken" FOR EACH STATEMENT EXECUTE FUNCTION "token_cache_invalidate"();
CREATE TRIGGER "Grant_token_cache_truncate" AFTER TRUNCATE ON "Grant" FOR EACH STATEMENT EXECUTE FUNCTION "token_cache_invalidate"();
CREATE TRIGGER "User_token_cache_truncate" AFTER TRUNCATE ON "User" FOR EACH STATEMENT EXECUTE FUNCTION "token_cache_invalidate"();
CREATE TRIGGER "Client_token_cache_truncate" AFTER TRUNCATE ON "Client" FOR EACH STATEMENT EXECUTE FUNCTION "token_cache_invalidate"();
