/**
 * The single sign-on capability's public surface (docs/api/sso.md): the only module routers and
 * the HTTP host import from src/sso/ (docs/architecture.md, "Rules").
 */
export * as sso from './sso.service.ts'
export { AuthProvidersResponse, OidcCallbackQuery, OidcStartQuery, OidcTokenInput } from './sso.schema.ts'
export { STATE_TTL_MS } from './sso-store.ts'
