-- Registered clients' rows kept under the token cache's lease. On PostgreSQL this migration adds the trigger
-- that tells every instance of a change to a kept row (src/db/pg-token-cache.ts). SQLite keeps no client rows:
-- reading one is an in-process statement of a few microseconds (src/db/fast-sql.ts).
-- Kept so that both databases have the same migrations by name.
SELECT 1;
