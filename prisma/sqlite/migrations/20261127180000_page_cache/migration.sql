-- The collection-page cache. On PostgreSQL this migration adds the triggers that tell every instance of a
-- change a kept page depends on (src/db/page-cache.ts). SQLite needs none: each instance asks the file's
-- PRAGMA data_version, which changes with any commit by any connection (src/db/fast-sql.ts).
-- Kept so that both databases have the same migrations by name.
SELECT 1;
