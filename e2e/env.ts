// The environment of the server under test, shared by playwright.config.ts and the specs (which create
// their fixtures through the app's own admin CLI against the same database).
const port = Number(process.env.E2E_PORT ?? 3210);
/** The test's own callback server (a client's redirect URI); E2E_CALLBACK_PORT lets two suites run side by side. */
export const callbackPort = Number(process.env.E2E_CALLBACK_PORT ?? 4999);

export const baseURL = `http://localhost:${port}`;
/** A second server some specs start themselves (another configuration of the same build); E2E_EXTRA_PORT. */
export const extraPort = Number(process.env.E2E_EXTRA_PORT ?? port + 1000);
/** The test's server of client ID metadata documents (e2e/client-metadata-document.spec.ts); E2E_METADATA_PORT. */
export const metadataPort = Number(process.env.E2E_METADATA_PORT ?? port + 2000);

export const e2eEnv = {
  NODE_ENV: "production",
  PORT: String(port),
  APP_URL: baseURL,
  DATABASE_URL: process.env.E2E_DATABASE_URL ?? "",
  AUTH_SECRET: "e2e-secret-e2e-secret-e2e-secret-e2e-secret",
  LOG_LEVEL: "warn",
  DEV_MAILBOX: "1",
  RESEND_API_KEY: "",
  // Dynamic registration with initial access tokens (docs/rules/tokens.md#dynamic-registration), for the
  // interop walk from a URL.
  REGISTRATION: "token",
  // The one http origin client ID metadata documents may come from, the test's own server
  // (docs/rules/tokens.md#client-id-metadata-documents; tests only, never in production).
  CLIENT_ID_METADATA_INSECURE_ORIGIN: `http://127.0.0.1:${metadataPort}`,
};
