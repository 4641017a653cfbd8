-- The cap on unexpired pushed requests per client (src/par/pushed-requests.ts) counts them by client.
CREATE INDEX "PushedAuthorizationRequest_clientId_expiresAt_idx" ON "PushedAuthorizationRequest"("clientId", "expiresAt");
