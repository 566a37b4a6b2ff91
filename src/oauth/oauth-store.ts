/**
 * What the OAuth authorization server keeps (docs/api/mcp.md, "Authorization"): registered
 * clients, authorization codes (60 seconds) and refresh tokens, the secrets only as SHA-256
 * hashes. Codes and refresh tokens are taken by a delete that answers the row, so each is used
 * once whoever asks concurrently. Writing a code deletes the expired ones (an indexed range).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import { OAuthClient, type OAuthClientAuthMethod } from '../../entities/index.ts'
import { queries, type Em } from '../platform/db.ts'
import { hashToken } from '../platform/tokens.ts'

/** How long a client has to exchange an authorization code. */
export const CODE_TTL_MS = 60_000
/** How long a refresh token lasts; each use gives a new one for as long again. */
export const REFRESH_TTL_MS = 30 * 24 * 3600_000

/** A registered client as the server uses it. */
export interface StoredClient {
  id: number
  clientId: string
  secretHash: string | null
  authMethod: OAuthClientAuthMethod
  clientName: string | null
  redirectUris: string[]
  metadata: Record<string, unknown>
  createdAt: Date
}

/** Registers a client; answers its new `client_id` and, for a confidential client, its secret (plaintext, answered once). */
export async function saveClient(
  em: Em,
  input: { authMethod: OAuthClientAuthMethod; clientName: string | null; redirectUris: string[]; metadata: Record<string, unknown> },
): Promise<{ clientId: string; secret: string | null; createdAt: Date }> {
  const clientId = randomUUID()
  const secret = input.authMethod === 'none' ? null : randomBytes(32).toString('base64url')
  const created = em.create(OAuthClient, {
    clientId,
    clientSecretHash: secret === null ? null : hashToken(secret),
    authMethod: input.authMethod,
    clientName: input.clientName,
    redirectUris: input.redirectUris,
    metadata: input.metadata,
  })
  await em.flush()
  return { clientId, secret, createdAt: created.createdAt }
}

/** The client of `clientId`, or null. */
export async function findClient(em: Em, clientId: string): Promise<StoredClient | null> {
  const row = await queries(em)
    .selectFrom('oauth_clients')
    .select(['id', 'client_id', 'client_secret_hash', 'auth_method', 'client_name', 'redirect_uris', 'metadata', 'created_at'])
    .where('client_id', '=', clientId)
    .executeTakeFirst()
  if (!row) return null
  return {
    id: row.id,
    clientId: row.client_id,
    secretHash: row.client_secret_hash,
    authMethod: row.auth_method,
    clientName: row.client_name,
    redirectUris: row.redirect_uris,
    metadata: row.metadata,
    createdAt: row.created_at,
  }
}

/** What a consent approved, kept with its code. */
export interface Grant {
  clientId: number
  userId: number
  workspaceId: number
  redirectUri: string
  codeChallenge: string
  resource: string | null
}

/** A new authorization code of `grant` (its hash stored); valid {@link CODE_TTL_MS}. */
export async function issueCode(em: Em, grant: Grant): Promise<string> {
  const db = queries(em)
  const now = new Date()
  const code = randomBytes(32).toString('base64url')
  await db.deleteFrom('oauth_codes').where('expires_at', '<=', now).execute()
  await db
    .insertInto('oauth_codes')
    .values({
      code_hash: hashToken(code),
      client_id: grant.clientId,
      user_id: grant.userId,
      workspace_id: grant.workspaceId,
      redirect_uri: grant.redirectUri,
      code_challenge: grant.codeChallenge,
      resource: grant.resource,
      expires_at: new Date(now.getTime() + CODE_TTL_MS),
      created_at: now,
    })
    .execute()
  return code
}

/** The grant of `code`, deleted in the same statement (used once, even by a failed exchange); null when unknown, used or expired. */
export async function takeCode(em: Em, code: string): Promise<Grant | null> {
  const row = await queries(em)
    .deleteFrom('oauth_codes')
    .where('code_hash', '=', hashToken(code))
    .returning(['client_id', 'user_id', 'workspace_id', 'redirect_uri', 'code_challenge', 'resource', 'expires_at'])
    .executeTakeFirst()
  if (!row || row.expires_at.getTime() <= Date.now()) return null
  return {
    clientId: row.client_id,
    userId: row.user_id,
    workspaceId: row.workspace_id,
    redirectUri: row.redirect_uri,
    codeChallenge: row.code_challenge,
    resource: row.resource,
  }
}

/** A new refresh token of access token `accessTokenId` for client `clientId` (its hash stored). */
export async function issueRefreshToken(em: Em, clientId: number, accessTokenId: number, resource: string | null): Promise<string> {
  const token = randomBytes(32).toString('base64url')
  const now = new Date()
  await queries(em)
    .insertInto('oauth_refresh_tokens')
    .values({
      token_hash: hashToken(token),
      client_id: clientId,
      access_token_id: accessTokenId,
      resource,
      expires_at: new Date(now.getTime() + REFRESH_TTL_MS),
      created_at: now,
    })
    .execute()
  return token
}

/** The refresh token `token`, deleted in the same statement (rotation: used once); null when unknown, used or expired. */
export async function takeRefreshToken(em: Em, token: string): Promise<{ clientId: number; accessTokenId: number; resource: string | null } | null> {
  const row = await queries(em)
    .deleteFrom('oauth_refresh_tokens')
    .where('token_hash', '=', hashToken(token))
    .returning(['client_id', 'access_token_id', 'resource', 'expires_at'])
    .executeTakeFirst()
  if (!row || row.expires_at.getTime() <= Date.now()) return null
  return { clientId: row.client_id, accessTokenId: row.access_token_id, resource: row.resource }
}
