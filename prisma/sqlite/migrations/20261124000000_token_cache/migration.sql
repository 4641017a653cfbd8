-- Issue 8: the validated-token cache. On PostgreSQL this migration adds the triggers that tell every instance
-- of a change a cached token depends on (src/server/pg-token-cache.ts). SQLite needs none: each instance asks
-- the file's PRAGMA data_version, which changes with any commit by any connection (src/server/fast-sql.ts).
-- Kept so that both databases have the same migrations by name.
SELECT 1;
