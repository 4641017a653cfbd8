// What the stored copy of a mail says where its single-use link was
// (docs/rules/permission-requests.md#mail-and-the-outbox: once the provider accepted the mail, no live token
// stays at rest; src/email/deliver.ts swaps the copy in).
export const LINK_REMOVED_NOTE = "(The link was removed from the stored copy of this e-mail once it was sent; it is only in the e-mail that was delivered.)";
