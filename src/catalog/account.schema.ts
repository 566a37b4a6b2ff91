/**
 * Account wire shapes (docs/api/resources.md, "Accounts": credentials of a provider in a workspace)
 * and the row -> wire mapper. The secret is write-only: responses carry `secret_hint` and
 * `has_secret`, never the secret or its ciphertext.
 */
import { z } from 'zod'
import {
  ACCOUNT_VISIBILITIES,
  PROVIDER_DRIVERS,
  PROVIDER_TYPES,
  type AccountVisibility as TAccountVisibility,
  type ProviderDriver,
  type ProviderType,
} from '../../entities/index.ts'
import { HttpUrl, StringMetadata, StringMetadataInput, StringMetadataPatch } from './provider.schema.ts'
import { NestedUser, NestedWorkspace, toNestedUser, toWorkspaceBase, type UserRow, type WorkspaceRow } from '../access/user-workspace.schema.ts'
import { iso, name, pageQuery, sortParam, text, timestamp, withParam } from '../access/wire.ts'

/** Relations an account list can embed (`with`); single accounts embed both. */
export const ACCOUNT_RELATIONS = ['user', 'workspace'] as const
/** Sortable columns of the account list. */
export const ACCOUNT_SORTS = ['created_at', '-created_at', 'name', '-name', 'updated_at', '-updated_at'] as const
/** Largest secret, in UTF-8 bytes (8 KiB). */
export const SECRET_MAX_BYTES = 8 * 1024

/** `private` or `workspace`: accounts are never public. */
export const AccountVisibility = z.enum(ACCOUNT_VISIBILITIES)

/** A secret as sent: 1..8 KiB of storable text. Never echoed in any answer or error. */
export const Secret = text(SECRET_MAX_BYTES, 1).refine(
  (value) => Buffer.byteLength(value, 'utf8') <= SECRET_MAX_BYTES,
  `must not exceed ${SECRET_MAX_BYTES} bytes`,
)

const With = withParam(ACCOUNT_RELATIONS)

/** Create body (plus the workspace context's `workspace_uuid`). `secret: null` means none. */
export const CreateAccountInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: name(),
  provider_uuid: z.uuid(),
  secret: Secret.nullable().optional(),
  base_url: HttpUrl.nullable().optional(),
  visibility: AccountVisibility.optional(),
  metadata: StringMetadataInput.optional(),
  with: With.optional(),
})
export type TCreateAccountInput = z.infer<typeof CreateAccountInput>

/**
 * `PUT /api/v1/accounts/{account_uuid}`: the create fields, all optional, `metadata` as a patch.
 * Omitted fields are kept; `secret: null` removes the secret and `base_url: null` the override;
 * `metadata` merges key by key.
 */
export const UpdateAccountInput = z.strictObject({
  account_uuid: z.uuid(),
  ...CreateAccountInput.partial().shape,
  metadata: StringMetadataPatch.optional(),
})
export type TUpdateAccountInput = z.infer<typeof UpdateAccountInput>

/** Retrieve query: `with` only validates (a single account embeds user and workspace anyway). */
export const RetrieveAccountInput = z.strictObject({
  account_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  with: With.optional(),
})

/** Delete path (plus the workspace context). */
export const DeleteAccountInput = z.strictObject({ account_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** List query. */
export const AccountListInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(ACCOUNT_SORTS, '-created_at'),
  with: With.optional(),
  provider_uuid: z.uuid().optional(),
  search: text(255).optional(),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TAccountListInput = z.infer<typeof AccountListInput>

/** The provider of an account, as embedded. */
export const AccountProvider = z.object({
  uuid: z.uuid(),
  slug: z.string(),
  name: z.string(),
  type: z.enum(PROVIDER_TYPES),
  driver: z.enum(PROVIDER_DRIVERS),
})

/** An account as answered. */
export const Account = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    provider: AccountProvider,
    visibility: AccountVisibility,
    secret_hint: z.string().nullable(),
    has_secret: z.boolean(),
    base_url: z.string().nullable(),
    metadata: StringMetadata,
    is_owner: z.boolean(),
    user: NestedUser.nullable(),
    workspace: NestedWorkspace.nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Account' })
export type TAccount = z.infer<typeof Account>

/**
 * Columns of `accounts` a mapper reads; never `secretCiphertext`. `secret_key_id` is text, so it
 * is read on its own (`selectColumns` casts every `...Id` field to a number).
 */
export const ACCOUNT_FIELDS = [
  'id', 'uuid', 'name', 'visibility', 'secretHint', 'baseUrl', 'metadata', 'providerId', 'userId',
  'workspaceId', 'createdAt', 'updatedAt',
] as const

/** An `accounts` row as raw SQL reads it with {@link ACCOUNT_FIELDS}, plus its provider's columns. */
export interface AccountRow {
  id: number
  uuid: string
  name: string
  visibility: TAccountVisibility
  secretKeyId: string | null
  secretHint: string | null
  baseUrl: string | null
  metadata: Record<string, string>
  providerId: number
  userId: number
  workspaceId: number
  createdAt: Date | string
  updatedAt: Date | string
  providerUuid: string
  providerSlug: string
  providerName: string
  providerType: ProviderType
  providerDriver: ProviderDriver
}

/** Row -> wire; `user` and `workspace` are embedded when given. */
export function toAccount(
  row: AccountRow,
  embed: { user: UserRow | null; workspace: WorkspaceRow | null },
  viewerId: number,
  appUrl: string,
): TAccount {
  return {
    uuid: row.uuid,
    name: row.name,
    provider: { uuid: row.providerUuid, slug: row.providerSlug, name: row.providerName, type: row.providerType, driver: row.providerDriver },
    visibility: row.visibility,
    secret_hint: row.secretHint,
    has_secret: row.secretKeyId !== null,
    base_url: row.baseUrl,
    metadata: row.metadata,
    is_owner: row.userId === viewerId,
    user: embed.user ? toNestedUser(embed.user, appUrl) : null,
    workspace: embed.workspace ? { ...toWorkspaceBase(embed.workspace, viewerId, appUrl), user: null } : null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}
