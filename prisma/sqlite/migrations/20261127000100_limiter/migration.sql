-- The cap on unexpired pushed requests per client (src/par/pushed-requests.ts) counts them by client. SQLite
-- needs no function for the limiter: its reservations are one BEGIN IMMEDIATE transaction
-- (src/db/fast-sql.ts reserveSlots).
CREATE INDEX "PushedAuthorizationRequest_clientId_expiresAt_idx" ON "PushedAuthorizationRequest"("clientId", "expiresAt");
