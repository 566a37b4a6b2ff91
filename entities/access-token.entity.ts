import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { timestamps } from './columns.ts'
import { uuidv7 } from 'uuidv7'
import { User, Workspace } from './user-workspace.entity.ts'

/** `basic`: issued by sign-in; `application`: created by a user for an integration (docs/api/authentication.md). */
export const TOKEN_KINDS = ['basic', 'application'] as const
export type TokenKind = (typeof TOKEN_KINDS)[number]

/** What a token may do: `read` allows queries only, `write` also mutations. */
export const TOKEN_ABILITIES = ['read', 'write'] as const
export type TokenAbility = (typeof TOKEN_ABILITIES)[number]

/**
 * A bearer token (`access_tokens`). Only the SHA-256 of the plaintext is stored; `prefix` keeps
 * the first characters so a user can recognise a token in a list.
 */
export const AccessToken = defineEntity({
  name: 'AccessToken',
  tableName: 'access_tokens',
  indexes: [{ properties: ['user', 'kind'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    uuid: p.uuid().unique().onCreate(() => uuidv7()),
    user: () =>
      p.manyToOne(User)
      .fieldName('user_id')
      .deleteRule('cascade'),
    kind: p.enum(TOKEN_KINDS),
    name: p.string().length(255),
    tokenHash: p.string().length(64).unique().fieldName('token_hash').hidden(),
    prefix: p.string().length(16),
    abilities: p.json<TokenAbility[]>(),
    workspace: () =>
      p.manyToOne(Workspace)
      .nullable()
      .fieldName('workspace_id')
      .deleteRule('cascade'),
    serviceId: p.string().length(64).nullable().fieldName('service_id'),
    expiresAt: p.datetime().nullable().fieldName('expires_at'),
    lastUsedAt: p.datetime().nullable().fieldName('last_used_at'),
    revokedAt: p.datetime().nullable().fieldName('revoked_at'),
    ...timestamps(),
  },
})

export type IAccessToken = InferEntity<typeof AccessToken>
