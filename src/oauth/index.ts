/**
 * The OAuth capability's public surface (docs/api/mcp.md, "Authorization"): the authorization
 * server MCP clients use to obtain application access tokens; the only module routers and the
 * HTTP host import from src/oauth/ (docs/architecture.md, "Rules").
 */
export * as oauth from './oauth.service.ts'
export { OAuthClientInput, OAuthClientResponse, OAuthConsentInput, OAuthConsentResponse } from './oauth.schema.ts'
