// Whose e-mail a viewer may see (docs/rules/permission-requests.md#who-sees-an-e-mail-address). Another user's
// e-mail is shown, on pages, in mail and in API representations, only to that user; to the target of a
// permission request for its requester; and for its user_allowed when the requester named them by e-mail (the
// requester knew the address and chose to tell the target). Everyone else sees names, and where a name could
// mislead, the user's id (`personLabel`). Names are chosen by their owners, so an e-mail address is the only
// thing a target can trust about who asks; an owner who lets a user id into a bundle learns nothing more than
// the name.
//
// Every place that shows a user asks `maySeeEmail`; nothing else decides.

/** Where a user is shown to a viewer. */
export type EmailContext =
  | { kind: "plain" }
  | {
      kind: "permission_request";
      requestedById: number;
      userTargetId: number;
      userAllowedId: number;
      allowedNamedByEmail: boolean;
    };

const PLAIN: EmailContext = { kind: "plain" };

/** May `viewerId` (null: nobody signed in) see the e-mail of user `userId` in `context`? */
export function maySeeEmail(viewerId: number | null, userId: number, context: EmailContext = PLAIN): boolean {
  if (viewerId === null) return false;
  if (viewerId === userId) return true;
  if (context.kind === "permission_request" && viewerId === context.userTargetId) {
    if (userId === context.requestedById) return true;
    if (userId === context.userAllowedId && context.allowedNamedByEmail) return true;
  }
  return false;
}

/** The context of a permission request row, for maySeeEmail. */
export function permissionRequestContext(row: {
  requestedById: number;
  userTargetId: number;
  userAllowedId: number;
  allowedNamedByEmail: boolean;
}): EmailContext {
  return {
    kind: "permission_request",
    requestedById: row.requestedById,
    userTargetId: row.userTargetId,
    userAllowedId: row.userAllowedId,
    allowedNamedByEmail: row.allowedNamedByEmail,
  };
}

export type Person = { id: number; name: string; email: string | null };

/** A user as a viewer may see them: the e-mail is null unless maySeeEmail allows it. */
export function visiblePerson(user: { id: number; name: string; email: string }, viewerId: number | null, context: EmailContext = PLAIN): Person {
  return { id: user.id, name: user.name, email: maySeeEmail(viewerId, user.id, context) ? user.email : null };
}

/** "Name (e-mail)" when the e-mail may be shown, else "Name (user 7)": names are not unique, and chosen freely. */
export function personLabel(person: Person): string {
  return person.email ? `${person.name} (${person.email})` : `${person.name} (user ${person.id})`;
}
