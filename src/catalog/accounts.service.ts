/**
 * Accounts (docs/api/resources.md, "Accounts"): credentials of a provider in a workspace. The secret
 * is sealed with AES-256-GCM under APP_KEY (./secrets.ts) and bound to its row; responses carry
 * only `secret_hint` and `has_secret`, and no query here reads the ciphertext except
 * `revealAccountSecret` (src/platform/account-secrets.ts) and {@link resealSecrets}. Access runs through
 * src/access/resource-access.ts first in every function.
 */
import { LockMode } from '@mikro-orm/core'
import { accountSealContext as sealContext } from '../platform/account-secrets.ts'
import { uuidv7 } from 'uuidv7'
import { Account, Provider, type IAccount } from '../../entities/index.ts'
import { audit, entityFields, fieldChanges } from '../access/audit.ts'
import { listScopeSql, requireResource } from '../access/resource-access.ts'
import type { Config } from '../platform/config.ts'
import { queries, type Em } from '../platform/db.ts'
import { ConflictError } from '../platform/errors.ts'
import {
  ACCOUNT_FIELDS,
  toAccount,
  type AccountRow,
  type TAccount,
  type TAccountListInput,
  type TCreateAccountInput,
  type TUpdateAccountInput,
} from './account.schema.ts'
import type { UserRow, WorkspaceRow } from '../access/user-workspace.schema.ts'
import { usableProvider } from './providers.service.ts'
import { Conditions, searchSql } from '../access/list-filters.ts'
import { listPage, nameAndTimeSorts, type ListSource } from '../access/list-page.ts'
import { resealColumn, type ResealReport } from '../platform/reseal.ts'
import { keyringOf, seal, secretHint, type Keyring } from '../platform/secrets.ts'
import { selectColumns, unprefix, userColumns, workspaceColumns } from '../platform/sql.ts'
import type { ResourceCtx } from '../context.ts'
import { mergeMetadata } from '../access/metadata.ts'

/**
 * Page or single-row source: the account, its provider, owner and workspace; never the ciphertext.
 * Owner and workspace are left joins (the keys are not null) so the count can skip them.
 */
const SOURCE: ListSource = {
  from: 'accounts a join providers pv on pv.id = a.provider_id left join users u on u.id = a.user_id left join workspaces w on w.id = a.workspace_id',
  columns: `${selectColumns('a', '', ACCOUNT_FIELDS)}, a.secret_key_id as "secretKeyId", pv.uuid as "providerUuid",
    pv.slug as "providerSlug", pv.name as "providerName", pv.type as "providerType", pv.driver as "providerDriver",
    ${userColumns('u', 'u_')}, ${workspaceColumns('w', 'w_')}`,
  alias: 'a',
  sorts: nameAndTimeSorts('a'),
}

/** The AES-GCM additional data binding a ciphertext to its account. */
function toWire(ctx: ResourceCtx, row: Record<string, unknown>, embed: { user: boolean; workspace: boolean }): TAccount {
  return toAccount(
    unprefix<AccountRow>(row, ''),
    {
      user: embed.user ? unprefix<UserRow>(row, 'u_') : null,
      workspace: embed.workspace ? unprefix<WorkspaceRow>(row, 'w_') : null,
    },
    ctx.auth.user.id,
    ctx.config.appUrl,
  )
}

async function load(ctx: ResourceCtx, id: number): Promise<{ data: TAccount }> {
  const [row] = await ctx.em.execute(`select ${SOURCE.columns} from ${SOURCE.from} where a.id = ?`, [id])
  return { data: toWire(ctx, row, { user: true, workspace: true }) }
}

/**
 * Accounts the caller may see in the request's workspace (docs/api/tenancy.md), filtered by
 * `provider_uuid` and `search` (name, case-insensitive); `with=user,workspace` embeds those.
 */
export async function list(ctx: ResourceCtx, input: TAccountListInput) {
  const where = new Conditions(listScopeSql('a', 'accounts', ctx))
  if (input.provider_uuid) where.add('pv.uuid = ?', input.provider_uuid)
  if (input.search) where.add(searchSql(['a.name'], input.search))
  const embed = { user: input.with?.includes('user') ?? false, workspace: input.with?.includes('workspace') ?? false }
  const query = { with: input.with?.join(','), provider_uuid: input.provider_uuid, search: input.search }
  return listPage(ctx, SOURCE, where.toSql(), input, { path: '/api/v1/accounts', query }, (row) => toWire(ctx, row, embed))
}

/** Retrieves an account the caller may see. @throws NotFoundError otherwise. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TAccount }> {
  const access = await requireResource(ctx, 'accounts', 'Account', uuid, 'read')
  return load(ctx, access.id)
}

/** The sealed columns of a secret (all null without one). */
function sealedColumns(keyring: Keyring, uuid: string, secret: string | null) {
  if (secret === null) return { secretCiphertext: null, secretKeyId: null, secretHint: null }
  const sealed = seal(keyring, secret, sealContext(uuid))
  return { secretCiphertext: sealed.ciphertext, secretKeyId: sealed.keyId, secretHint: secretHint(secret) }
}

/**
 * Creates an account of a provider the caller may see, in the request's workspace.
 * @throws ValidationError naming `provider_uuid` for a provider the caller cannot see.
 */
export async function create(ctx: ResourceCtx, input: TCreateAccountInput): Promise<{ data: TAccount }> {
  const providerId = await usableProvider(ctx, input.provider_uuid, ['provider_uuid'])
  const uuid = uuidv7()
  const id = await ctx.em.transactional(async (em) => {
    const account = em.create(Account, {
      uuid,
      name: input.name,
      provider: providerId,
      visibility: input.visibility ?? 'private',
      ...sealedColumns(keyringOf(ctx.config), uuid, input.secret ?? null),
      baseUrl: input.base_url ?? null,
      metadata: input.metadata ?? {},
      user: ctx.auth.user.id,
      workspace: ctx.workspace.workspace.id,
    })
    await em.flush()
    await audit(em, ctx, {
      action: 'account.create',
      resource: { type: 'account', uuid },
      changes: fieldChanges(null, auditedFields(account, input.provider_uuid)),
    })
    return account.id
  })
  return load(ctx, id)
}

/** An account's fields the audit log records (docs/api/audit.md), besides its provider and its secret. */
const AUDITED = ['name', 'visibility', 'baseUrl', 'metadata'] as const

/**
 * An account's fields as the audit log records them, its provider by uuid. The secret is given as
 * its ciphertext, under `secret`: the log redacts it, and a new secret differs from the old one
 * (each seal is random), so setting, replacing and removing it each show.
 */
const auditedFields = (account: IAccount, providerUuid: string): Record<string, unknown> => ({
  ...entityFields(account, AUDITED),
  provider_uuid: providerUuid,
  secret: account.secretCiphertext ?? null,
})

/**
 * Updates an account (write permission): omitted fields kept, `secret: null` removes the secret,
 * `base_url: null` the override, `metadata` merged key by key.
 * @throws NotFoundError (not visible), ForbiddenError (too weak a permission), ValidationError
 *   (`provider_uuid` not visible), ConflictError (changing the provider of an account that
 *   agents' tools are bound to).
 */
export async function update(ctx: ResourceCtx, input: TUpdateAccountInput): Promise<{ data: TAccount }> {
  const access = await requireResource(ctx, 'accounts', 'Account', input.account_uuid, 'write')
  const providerId = input.provider_uuid === undefined ? undefined : await usableProvider(ctx, input.provider_uuid, ['provider_uuid'])
  // Locked, so two concurrent metadata merges cannot lose each other's keys.
  await ctx.em.transactional(async (em) => {
    const entity = await em.findOneOrFail(Account, access.id, { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['secretCiphertext'] })
    const provider = await queries(em).selectFrom('providers').select('uuid').where('id', '=', entity.provider.id).executeTakeFirstOrThrow()
    const before = auditedFields(entity, provider.uuid)
    if (providerId !== undefined && providerId !== entity.provider.id) {
      const bound = await queries(em).selectFrom('agent_tools').select('id').where('account_id', '=', access.id).limit(1).executeTakeFirst()
      if (bound) throw new ConflictError("Agents' tools use this account: unbind it before changing its provider")
      entity.provider = em.getReference(Provider, providerId)
    }
    if (input.name !== undefined) entity.name = input.name
    if (input.visibility !== undefined) entity.visibility = input.visibility
    if (input.base_url !== undefined) entity.baseUrl = input.base_url
    if (input.metadata !== undefined) entity.metadata = mergeMetadata(entity.metadata, input.metadata)
    if (input.secret !== undefined) {
      const sealed = sealedColumns(keyringOf(ctx.config), entity.uuid, input.secret)
      entity.secretCiphertext = sealed.secretCiphertext
      entity.secretKeyId = sealed.secretKeyId
      entity.secretHint = sealed.secretHint
    }
    await em.flush()
    await audit(em, ctx, {
      action: 'account.update',
      resource: { type: 'account', uuid: access.uuid },
      changes: fieldChanges(before, auditedFields(entity, input.provider_uuid ?? provider.uuid)),
    })
  })
  return load(ctx, access.id)
}

/**
 * Soft-deletes an account (admin permission) and unbinds it from agents' tools, as the foreign
 * key does on a hard delete.
 * @throws NotFoundError (not visible), ForbiddenError (too weak a permission).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const access = await requireResource(ctx, 'accounts', 'Account', uuid, 'admin')
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    await db
      .updateTable('accounts')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', access.id)
      .execute()
    await db.updateTable('agent_tools').set({ account_id: null }).where('account_id', '=', access.id).execute()
    await audit(em, ctx, { action: 'account.delete', resource: { type: 'account', uuid: access.uuid } })
  })
}

/**
 * Re-seals every account secret not sealed under the current APP_KEY (`npm run keys:rotate`),
 * in batches, each row in its own short update guarded by its old key id; `failed` holds account uuids.
 */
export function resealSecrets(em: Em, config: Pick<Config, 'appKey' | 'previousAppKeys'>, batchSize = 200): Promise<ResealReport> {
  return resealColumn(
    em,
    keyringOf(config),
    { table: 'accounts', ciphertext: 'secret_ciphertext', keyId: 'secret_key_id', context: sealContext },
    batchSize,
  )
}
