// The bundle id of a page address (/bundles/<id>): digits only, as in the API's paths
// (docs/rules/permission-requests.md#ids-and-tokens-in-paths); anything else is no bundle (404).
export function bundleIdOf(raw: string): number | null {
  if (!/^[1-9][0-9]{0,15}$/.test(raw)) return null;
  const id = Number(raw);
  return Number.isSafeInteger(id) ? id : null;
}

/** The link a bundle's owner gives people who want to ask for access: it fills in the form (bundle, owner). */
export const askLinkPath = (bundleId: number, ownerEmail: string) => `/bundles/${bundleId}/ask?${new URLSearchParams({ owner: ownerEmail })}`;
