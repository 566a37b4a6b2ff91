/**
 * The OAuth 2.1 authorization server of MCP clients (docs/api/mcp.md, "Authorization"): the
 * clients registered dynamically, the authorization codes a consent issues (60 seconds, used
 * once) and the refresh tokens of the access tokens issued. Codes, refresh tokens and client
 * secrets are stored only as SHA-256 hashes, as bearer tokens are.
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { AccessToken } from './access-token.entity.ts'
import { User, Workspace } from './user-workspace.entity.ts'

/** How a client authenticates at the token endpoint (RFC 7591 `token_endpoint_auth_method`). */
export const OAUTH_CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none'] as const
export type OAuthClientAuthMethod = (typeof OAUTH_CLIENT_AUTH_METHODS)[number]

/**
 * A client registered through `POST /oauth/register` (`oauth_clients`). `metadata` is the
 * registration as accepted (RFC 7591 client metadata), answered again as registered;
 * `clientSecretHash` is null for a public client (`token_endpoint_auth_method: none`).
 */
export const OAuthClient = defineEntity({
  name: 'OAuthClient',
  tableName: 'oauth_clients',
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    clientId: p.string().length(64).unique().fieldName('client_id'),
    clientSecretHash: p.string().length(64).nullable().fieldName('client_secret_hash').hidden(),
    authMethod: p.enum(OAUTH_CLIENT_AUTH_METHODS).fieldName('auth_method'),
    clientName: p.string().length(255).nullable().fieldName('client_name'),
    redirectUris: p.json<string[]>().fieldName('redirect_uris'),
    metadata: p.json<Record<string, unknown>>(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
  },
})

export type IOAuthClient = InferEntity<typeof OAuthClient>

/**
 * An authorization code (`oauth_codes`), keyed by its SHA-256: what the user approved (client,
 * redirect URI, workspace, resource) and the PKCE S256 challenge its exchange must answer.
 */
export const OAuthCode = defineEntity({
  name: 'OAuthCode',
  tableName: 'oauth_codes',
  properties: {
    codeHash: p.string().length(64).primary().fieldName('code_hash'),
    client: () => p.manyToOne(OAuthClient).fieldName('client_id').deleteRule('cascade'),
    user: () => p.manyToOne(User).fieldName('user_id').deleteRule('cascade'),
    workspace: () => p.manyToOne(Workspace).fieldName('workspace_id').deleteRule('cascade'),
    redirectUri: p.string().length(2048).fieldName('redirect_uri'),
    codeChallenge: p.string().length(128).fieldName('code_challenge'),
    resource: p.string().length(2048).nullable(),
    expiresAt: p.datetime().fieldName('expires_at').index(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
  },
})

export type IOAuthCode = InferEntity<typeof OAuthCode>

/**
 * A refresh token (`oauth_refresh_tokens`), keyed by its SHA-256, of one issued access token:
 * it works while that token is not revoked, and is replaced by a new one at each use (rotation).
 */
export const OAuthRefreshToken = defineEntity({
  name: 'OAuthRefreshToken',
  tableName: 'oauth_refresh_tokens',
  properties: {
    tokenHash: p.string().length(64).primary().fieldName('token_hash'),
    client: () => p.manyToOne(OAuthClient).fieldName('client_id').deleteRule('cascade'),
    accessToken: () => p.manyToOne(AccessToken).fieldName('access_token_id').deleteRule('cascade').index(),
    resource: p.string().length(2048).nullable(),
    expiresAt: p.datetime().fieldName('expires_at').index(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
  },
})

export type IOAuthRefreshToken = InferEntity<typeof OAuthRefreshToken>
