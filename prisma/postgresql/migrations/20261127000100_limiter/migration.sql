-- The cap on unexpired pushed requests per client (src/par/pushed-requests.ts) counts them by client.
CREATE INDEX "PushedAuthorizationRequest_clientId_expiresAt_idx" ON "PushedAuthorizationRequest"("clientId", "expiresAt");

-- The limiter's reservation (src/limits/limiter.ts) as one statement: takes one slot on every key, or none.
-- It locks every key (a transaction-scoped advisory lock in class 727272 on the key's hash, in ascending
-- order, so that two reservations never wait on each other crosswise), then, holding them, reads each key's
-- attempts in its window: each statement of a volatile function takes a new snapshot, which sees every
-- reservation committed before the lock was granted. When a key already holds its maximum it inserts
-- nothing and answers how many milliseconds remain until the oldest counted attempt leaves that key's window
-- (the longest over the full keys); else it inserts one attempt per key and answers their ids. Run on its
-- own the locks end with the statement; inside a transaction, with the transaction.
CREATE FUNCTION "limiter_reserve"("p_keys" text[], "p_max" int[], "p_window_ms" bigint[], "p_at" timestamp(3))
RETURNS TABLE ("ids" int[], "wait_ms" bigint) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  "i" int;
  "oldest" timestamp(3);
  "longest" bigint := NULL;
BEGIN
  PERFORM pg_advisory_xact_lock(727272, "sorted"."h")
    FROM (SELECT DISTINCT hashtext("k") AS "h" FROM unnest("p_keys") AS "k" ORDER BY 1) AS "sorted";
  FOR "i" IN 1 .. coalesce(array_length("p_keys", 1), 0) LOOP
    -- The max-th most recent attempt in the window: found only when the key is full.
    SELECT f."createdAt" INTO "oldest" FROM "FailedAttempt" f
      WHERE f."key" = "p_keys"["i"] AND f."createdAt" > "p_at" - "p_window_ms"["i"] * interval '1 millisecond'
      ORDER BY f."createdAt" DESC OFFSET "p_max"["i"] - 1 LIMIT 1;
    IF FOUND THEN
      "longest" := greatest(coalesce("longest", 0),
        (extract(epoch FROM ("oldest" - "p_at")) * 1000)::bigint + "p_window_ms"["i"]);
    END IF;
  END LOOP;
  IF "longest" IS NOT NULL THEN
    RETURN QUERY SELECT NULL::int[], "longest";
    RETURN;
  END IF;
  RETURN QUERY
    WITH "inserted" AS (
      INSERT INTO "FailedAttempt" ("key", "createdAt") SELECT "k", "p_at" FROM unnest("p_keys") AS "k" RETURNING "id"
    )
    SELECT array_agg("inserted"."id"), NULL::bigint FROM "inserted";
END;
$$;
