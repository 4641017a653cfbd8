// The service's name as people see it: page titles, the header, the web manifest and the body of every mail.
export const SERVICE_NAME = "Bundle permissions";

/** What the service does for a person, in one sentence (landing page, manifest, metadata). */
export const SERVICE_PURPOSE = "Decide which apps may use your account, and who may read your bundles.";
