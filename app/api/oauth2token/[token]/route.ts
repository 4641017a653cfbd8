// The token record's resource_uri (docs/rules/specification.md#token-record) answers DELETE like
// /api/accesstoken/<token> (docs/rules/tokens.md#deleting-a-token).
export { GET, POST, PUT, DELETE, PATCH, OPTIONS } from "../../accesstoken/[token]/route";
