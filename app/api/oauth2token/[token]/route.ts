// The token record's resource_uri (SPEC.md 2.1) answers DELETE like /api/accesstoken/<token> (CONTRACT.md 5).
export { GET, POST, PUT, DELETE, PATCH, OPTIONS } from "../../accesstoken/[token]/route";
