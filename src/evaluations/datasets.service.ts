/**
 * Datasets (docs/api/evaluations.md, "Datasets"): list, create, retrieve, update (`PUT`), delete.
 * A dataset is seen exactly like a prompt (docs/api/tenancy.md): every function starts with the
 * access check of src/access/resource-access.ts, and every visibility and share rule runs in SQL.
 * Its items are ./dataset-items.service.ts.
 */
import { LockMode } from '@mikro-orm/core'
import { Dataset } from '../../entities/index.ts'
import { audit, entityFields, fieldChanges } from '../access/audit.ts'
import { Conditions, searchSql } from '../access/list-filters.ts'
import { listScopeSql, requireResource } from '../access/resource-access.ts'
import { selectOwned } from '../access/owned-select.ts'
import { page, sortOf } from '../access/wire.ts'
import type { ResourceCtx } from '../context.ts'
import { queries } from '../platform/db.ts'
import type { SqlFragment } from '../platform/sql.ts'
import {
  DATASET_FIELDS,
  toDataset,
  type DatasetRow,
  type TCreateDatasetInput,
  type TDataset,
  type TListDatasetsInput,
  type TUpdateDatasetInput,
} from './dataset.schema.ts'

const SORT_COLUMNS: Record<string, string> = { created_at: 'd.created_at', name: 'lower(d.name)', updated_at: 'd.updated_at' }

/** A dataset's fields the audit log records (docs/api/audit.md). */
const AUDITED = ['name', 'description', 'visibility'] as const

/**
 * Reads datasets with the relations asked for, in one query: `user` and `workspace` are joined
 * only when embedded. `tail` follows the WHERE (order, limit, offset).
 */
async function select(ctx: ResourceCtx, embed: readonly string[], where: SqlFragment, tail = ''): Promise<TDataset[]> {
  const rows = await selectOwned<DatasetRow>(ctx, { table: 'datasets', alias: 'd', fields: DATASET_FIELDS, embed, where, tail })
  return rows.map(({ row, user, workspace }) => toDataset(row, { user, workspace }, ctx.auth.user.id, ctx.config.appUrl))
}

/** One dataset by id with its creator and workspace (the caller's access was checked). */
async function load(ctx: ResourceCtx, id: number): Promise<{ data: TDataset }> {
  const [dataset] = await select(ctx, ['user', 'workspace'], { sql: 'd.id = ?', params: [id] })
  return { data: dataset }
}

/**
 * `GET /api/v1/datasets`: the datasets the caller may list in the request's workspace (with
 * `visibility=public`, every public dataset of the service scope), as the paginator shape. Two
 * queries whatever the page size: the page (relations joined) and the count.
 */
export async function list(ctx: ResourceCtx, input: TListDatasetsInput) {
  const where = new Conditions(listScopeSql('d', 'datasets', ctx, input.visibility))
  if (input.search) where.add(searchSql(['d.name', 'd.description'], input.search))
  const filter = where.toSql()
  const { column, direction } = sortOf(input.sort)
  const order = `order by ${SORT_COLUMNS[column]} ${direction}, d.id ${direction}`
  const [items, [count]] = await Promise.all([
    select(ctx, input.with ?? [], filter, `${order} limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`),
    ctx.em.execute(`select count(*)::int as total from datasets d where ${filter.sql}`, filter.params),
  ])
  return page(items, {
    total: Number(count.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/datasets`,
    query: {
      sort: input.sort,
      with: input.with?.join(','),
      search: input.search,
      visibility: input.visibility,
      workspace_uuid: input.workspace_uuid,
    },
  })
}

/**
 * `GET /api/v1/datasets/{dataset_uuid}`: a dataset the caller may see, with its creator and workspace.
 * @throws NotFoundError when it does not exist or is not visible to the caller.
 */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TDataset }> {
  const dataset = await requireResource(ctx, 'datasets', 'Dataset', uuid, 'read')
  return load(ctx, dataset.id)
}

/** `POST /api/v1/datasets`: a dataset owned by the caller in the request's workspace, with no items. */
export async function create(ctx: ResourceCtx, input: TCreateDatasetInput): Promise<{ data: TDataset }> {
  const id = await ctx.em.transactional(async (em) => {
    const dataset = em.create(Dataset, {
      name: input.name,
      description: input.description ?? '',
      visibility: input.visibility ?? 'private',
      user: ctx.auth.user.id,
      workspace: ctx.workspace.workspace.id,
    })
    await em.flush()
    await audit(em, ctx, {
      action: 'dataset.create',
      resource: { type: 'dataset', uuid: dataset.uuid },
      changes: fieldChanges(null, entityFields(dataset, AUDITED)),
    })
    return dataset.id
  })
  return load(ctx, id)
}

/**
 * `PUT /api/v1/datasets/{dataset_uuid}`: omitted fields are kept, `null` clears `description`
 * (to `''`). The row is locked while it changes, so the audit event's `from` is what it replaced.
 * @throws NotFoundError (not visible), ForbiddenError (visible without `write`).
 */
export async function update(ctx: ResourceCtx, input: TUpdateDatasetInput): Promise<{ data: TDataset }> {
  const { id } = await requireResource(ctx, 'datasets', 'Dataset', input.dataset_uuid, 'write')
  await ctx.em.transactional(async (em) => {
    const dataset = await em.findOneOrFail(Dataset, id, { lockMode: LockMode.PESSIMISTIC_WRITE })
    const before = entityFields(dataset, AUDITED)
    em.assign(
      dataset,
      {
        name: input.name,
        description: input.description === null ? '' : input.description,
        visibility: input.visibility,
      },
      { ignoreUndefined: true },
    )
    await em.flush()
    await audit(em, ctx, {
      action: 'dataset.update',
      resource: { type: 'dataset', uuid: input.dataset_uuid },
      changes: fieldChanges(before, entityFields(dataset, AUDITED)),
    })
  })
  return load(ctx, id)
}

/**
 * `DELETE /api/v1/datasets/{dataset_uuid}`: soft-deletes (`deleted_at`); needs `admin` (owner,
 * workspace owner/admin, admin share). Its items stay stored but can no longer be reached.
 * @throws NotFoundError (not visible), ForbiddenError (visible without `admin`).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const dataset = await requireResource(ctx, 'datasets', 'Dataset', uuid, 'admin')
  await ctx.em.transactional(async (em) => {
    await queries(em)
      .updateTable('datasets')
      .set((eb) => ({ deleted_at: eb.fn<Date>('now'), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', dataset.id)
      .execute()
    await audit(em, ctx, { action: 'dataset.delete', resource: { type: 'dataset', uuid } })
  })
}
