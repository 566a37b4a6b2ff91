/**
 * Providers (docs/api/resources.md, "Providers"): the built-in ones (seeded, no workspace, listed to
 * everyone, read-only) and custom ones that belong to a workspace like any resource. Access runs
 * through src/access/resource-access.ts first in every function.
 */
import { randomBytes } from 'node:crypto'
import { Provider, type AuthScheme, type ProviderDriver, type ProviderType } from '../../entities/index.ts'
import { findResource, listScopeSql, requireResource } from '../access/resource-access.ts'
import { allows } from '../access/visibility.ts'
import { audit, entityFields, fieldChanges } from '../access/audit.ts'
import { LockMode } from '@mikro-orm/core'
import { queries, type Em } from '../platform/db.ts'
import { ForbiddenError, ValidationError, type FieldPath } from '../platform/errors.ts'
import {
  CUSTOM_DRIVERS,
  DEFAULT_DRIVER,
  PARAMETER_SCHEMES,
  PROVIDER_FIELDS,
  toProvider,
  type ProviderRow,
  type TCreateProviderInput,
  type TProvider,
  type TProviderListInput,
  type TUpdateProviderInput,
} from './provider.schema.ts'
import { Conditions, searchSql } from '../access/list-filters.ts'
import { listPage, nameAndTimeSorts, type ListSource } from '../access/list-page.ts'
import { selectColumns, unprefix } from '../platform/sql.ts'
import { slugify } from '../platform/slugs.ts'
import type { ResourceCtx } from '../context.ts'
import { mergeMetadata } from '../access/metadata.ts'

const SOURCE: ListSource = {
  from: 'providers p',
  columns: selectColumns('p', '', PROVIDER_FIELDS),
  alias: 'p',
  sorts: nameAndTimeSorts('p'),
}

const toWire = (ctx: ResourceCtx, row: Record<string, unknown>) => toProvider(unprefix<ProviderRow>(row, ''), ctx.auth.user.id)

/** Loads one provider by id (no access check: callers have made it). */
async function load(ctx: ResourceCtx, id: number): Promise<{ data: TProvider }> {
  const [row] = await ctx.em.execute(`select ${SOURCE.columns} from ${SOURCE.from} where p.id = ?`, [id])
  return { data: toWire(ctx, row) }
}

/**
 * Providers the caller may use in the request's workspace: the built-ins, the workspace's own
 * (by visibility), public ones and shared ones. Filters `type` and `search` (name, slug or
 * description, case-insensitive); the paginator shape.
 */
export async function list(ctx: ResourceCtx, input: TProviderListInput) {
  const where = new Conditions(listScopeSql('p', 'providers', ctx))
  if (input.type) where.add('p.type = ?', input.type)
  if (input.search) where.add(searchSql(['p.name', 'p.slug', 'p.description'], input.search))
  const query = { type: input.type, search: input.search }
  return listPage(ctx, SOURCE, where.toSql(), input, { path: '/api/v1/providers', query }, (row) => toWire(ctx, row))
}

/** Retrieves a provider the caller may see. @throws NotFoundError otherwise. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TProvider }> {
  const access = await requireResource(ctx, 'providers', 'Provider', uuid, 'read')
  return load(ctx, access.id)
}

/**
 * The id of the live provider `uuid` if the caller may use it (see it), and it is of `type` when
 * given; for the accounts and tools that refer to one. One query, two when `type` is given.
 * @throws ValidationError naming `field` otherwise (never revealing whether it exists).
 */
export async function usableProvider(ctx: ResourceCtx, uuid: string, field: FieldPath, type?: ProviderType): Promise<number> {
  const access = await findResource(ctx, 'providers', uuid)
  if (!access) throw new ValidationError(field, 'No provider you can use has this uuid')
  if (type) {
    const row = await queries(ctx.em).selectFrom('providers').select('type').where('id', '=', access.id).executeTakeFirstOrThrow()
    if (row.type !== type) throw new ValidationError(field, `The provider must be of type "${type}"`)
  }
  return access.id
}

/** Checks the driver against the type and `auth_parameter` against the scheme. */
function checkShape(type: ProviderType, driver: ProviderDriver, scheme: AuthScheme, parameter: string | null): void {
  const drivers: readonly ProviderDriver[] = CUSTOM_DRIVERS[type]
  if (!drivers.includes(driver)) {
    throw new ValidationError(['driver'], `A provider of type "${type}" uses one of: ${CUSTOM_DRIVERS[type].join(', ')}`)
  }
  if (PARAMETER_SCHEMES.includes(scheme) && !parameter) {
    throw new ValidationError(
      ['auth_parameter'],
      `The "${scheme}" auth scheme needs the name of the ${scheme === 'header' ? 'header' : 'query parameter'}`,
    )
  }
  if (!PARAMETER_SCHEMES.includes(scheme) && parameter) {
    throw new ValidationError(['auth_parameter'], `The "${scheme}" auth scheme takes no auth_parameter`)
  }
}

/** Slugs taken in a workspace: its live providers' and the built-ins'. */
async function takenSlugs(em: Em, workspaceId: number, slugs: string[], exceptId: number | null): Promise<Set<string>> {
  const rows = await queries(em)
    .selectFrom('providers')
    .select('slug')
    .where('deleted_at', 'is', null)
    .where((eb) => eb.or([eb('workspace_id', '=', workspaceId), eb('workspace_id', 'is', null)]))
    .where('slug', 'in', slugs)
    .where('id', 'is distinct from', exceptId)
    .execute()
  return new Set(rows.map((row) => row.slug))
}

async function assertSlugFree(em: Em, workspaceId: number, slug: string, exceptId: number | null): Promise<void> {
  if ((await takenSlugs(em, workspaceId, [slug], exceptId)).size) {
    throw new ValidationError(['slug'], 'The slug has already been taken')
  }
}

/** The slug of a name, with a random suffix when the plain one is taken in the workspace. */
async function freeSlug(ctx: ResourceCtx, workspaceId: number, name: string): Promise<string> {
  const derived = slugify(name)
  const base = derived === 'workspace' && !/workspace/i.test(name) ? 'provider' : derived
  const candidates = [base, ...Array.from({ length: 4 }, () => `${base}-${randomBytes(3).toString('hex')}`)]
  const taken = await takenSlugs(ctx.em, workspaceId, candidates, null)
  return candidates.find((slug) => !taken.has(slug)) ?? `${base}-${randomBytes(8).toString('hex')}`
}

/** A provider's fields the audit log records (docs/api/audit.md). */
const AUDITED = [
  'slug',
  'name',
  'description',
  'type',
  'driver',
  'baseUrl',
  'authScheme',
  'authParameter',
  'visibility',
  'metadata',
] as const

/**
 * Creates a custom provider in the request's workspace, owned by the caller.
 * @throws ValidationError (driver not of the type, auth_parameter missing or not allowed, slug taken).
 */
export async function create(ctx: ResourceCtx, input: TCreateProviderInput): Promise<{ data: TProvider }> {
  const workspaceId = ctx.workspace.workspace.id
  const driver = input.driver ?? DEFAULT_DRIVER[input.type]
  const scheme = input.auth_scheme ?? 'bearer'
  checkShape(input.type, driver, scheme, input.auth_parameter ?? null)
  if (input.slug) await assertSlugFree(ctx.em, workspaceId, input.slug, null)
  const slug = input.slug ?? (await freeSlug(ctx, workspaceId, input.name))
  const id = await ctx.em.transactional(async (em) => {
    const provider = em.create(Provider, {
      slug,
      name: input.name,
      description: input.description ?? '',
      type: input.type,
      driver,
      baseUrl: input.base_url,
      authScheme: scheme,
      authParameter: input.auth_parameter ?? null,
      isBuiltin: false,
      visibility: input.visibility ?? 'workspace',
      metadata: input.metadata ?? {},
      user: ctx.auth.user.id,
      workspace: workspaceId,
    })
    await em.flush()
    await audit(em, ctx, {
      action: 'provider.create',
      resource: { type: 'provider', uuid: provider.uuid },
      changes: fieldChanges(null, entityFields(provider, AUDITED)),
    })
    return provider.id
  })
  return load(ctx, id)
}

/** A custom provider the caller may `needed`; built-ins are read-only. */
async function requireCustom(ctx: ResourceCtx, uuid: string, needed: 'write' | 'admin') {
  const access = await requireResource(ctx, 'providers', 'Provider', uuid, 'read')
  if (access.workspaceId === null) throw new ForbiddenError('Built-in providers cannot be updated or deleted')
  if (!allows(access.permission, needed)) {
    throw new ForbiddenError(needed === 'write' ? 'You may not change this provider' : 'You may not delete this provider')
  }
  return { ...access, workspaceId: access.workspaceId }
}

/**
 * Updates a custom provider (write permission): omitted fields kept, `null` clears, `metadata`
 * merged. Changing `auth_scheme` to one without a parameter drops `auth_parameter`.
 * @throws NotFoundError (not visible), ForbiddenError (built-in, or too weak a permission),
 *   ValidationError (as for create).
 */
export async function update(ctx: ResourceCtx, input: TUpdateProviderInput): Promise<{ data: TProvider }> {
  const access = await requireCustom(ctx, input.provider_uuid, 'write')
  // Locked, so two concurrent metadata merges cannot lose each other's keys, and the shape is
  // checked on the values it is written over.
  await ctx.em.transactional(async (em) => {
    const entity = await em.findOneOrFail(Provider, access.id, { lockMode: LockMode.PESSIMISTIC_WRITE })
    const before = entityFields(entity, AUDITED)
    const driver = input.driver ?? entity.driver
    const scheme = input.auth_scheme ?? entity.authScheme
    const parameter =
      input.auth_parameter !== undefined ? input.auth_parameter : PARAMETER_SCHEMES.includes(scheme) ? (entity.authParameter ?? null) : null
    checkShape(entity.type, driver, scheme, parameter)
    if (input.slug !== undefined && input.slug !== entity.slug) await assertSlugFree(em, access.workspaceId, input.slug, access.id)
    if (input.name !== undefined) entity.name = input.name
    if (input.slug !== undefined) entity.slug = input.slug
    if (input.description !== undefined) entity.description = input.description ?? ''
    if (input.base_url !== undefined) entity.baseUrl = input.base_url
    if (input.visibility !== undefined) entity.visibility = input.visibility
    if (input.metadata !== undefined) entity.metadata = mergeMetadata(entity.metadata, input.metadata)
    entity.driver = driver
    entity.authScheme = scheme
    entity.authParameter = parameter
    await em.flush()
    await audit(em, ctx, {
      action: 'provider.update',
      resource: { type: 'provider', uuid: access.uuid },
      changes: fieldChanges(before, entityFields(entity, AUDITED)),
    })
  })
  return load(ctx, access.id)
}

/**
 * Soft-deletes a custom provider (admin permission), with what the foreign keys would do on a
 * hard delete: its accounts are deleted too (and unbound from agents' tools), and tools that
 * called it keep working without a provider.
 * @throws NotFoundError (not visible), ForbiddenError (built-in, or too weak a permission).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const access = await requireCustom(ctx, uuid, 'admin')
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    await db
      .updateTable('providers')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', access.id)
      .execute()
    await db
      .updateTable('agent_tools')
      .set({ account_id: null })
      .where('account_id', 'in', (eb) =>
        eb.selectFrom('accounts').select('id').where('provider_id', '=', access.id).where('deleted_at', 'is', null),
      )
      .execute()
    await db
      .updateTable('accounts')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('provider_id', '=', access.id)
      .where('deleted_at', 'is', null)
      .execute()
    await db.updateTable('tools').set({ provider_id: null }).where('provider_id', '=', access.id).execute()
    await audit(em, ctx, { action: 'provider.delete', resource: { type: 'provider', uuid: access.uuid } })
  })
}
