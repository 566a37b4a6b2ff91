/**
 * A dataset's items (docs/api/evaluations.md, "Datasets"): list, add (from `items` or from JSONL
 * uploads, ./dataset-jsonl.ts), update, delete. An item is reached through its dataset, whose
 * access rules it follows: reading needs `read` on the dataset, every change `write`. Adding and
 * deleting keep `datasets.items_count` in the same transaction as the items.
 */
import { LockMode } from '@mikro-orm/core'
import { uuidv7 } from 'uuidv7'
import { DatasetItem, type SharePermission } from '../../entities/index.ts'
import { audit, entityFields, fieldChanges } from '../access/audit.ts'
import { requireResource, requireResourceWith } from '../access/resource-access.ts'
import { page } from '../access/wire.ts'
import type { ResourceCtx } from '../context.ts'
import { queries, type Em } from '../platform/db.ts'
import { NotFoundError, ValidationError } from '../platform/errors.ts'
import { readJsonlItems } from './dataset-jsonl.ts'
import {
  DATASET_ITEM_COLUMNS,
  toDatasetItem,
  type DatasetItemRow,
  type TCreateDatasetItemsInput,
  type TDatasetItem,
  type TDatasetItemInput,
  type TListDatasetItemsInput,
  type TUpdateDatasetItemInput,
} from './dataset.schema.ts'

/** An item's fields the audit log records (docs/api/audit.md). */
const AUDITED = ['input', 'expectedOutput', 'metadata'] as const

/**
 * The item `uuid` and its dataset, when the caller holds at least `needed` on the dataset.
 * @throws NotFoundError (`Dataset item not found`) when there is no such item or its dataset is
 *   deleted or not visible to the caller; ForbiddenError when the caller sees the dataset with too
 *   weak a permission.
 */
async function requireItem(ctx: ResourceCtx, uuid: string, needed: SharePermission): Promise<{ id: number; datasetId: number }> {
  const item = await queries(ctx.em).selectFrom('dataset_items').select(['id', 'dataset_id']).where('uuid', '=', uuid).executeTakeFirst()
  if (!item) throw new NotFoundError('Dataset item')
  // The dataset's check says nothing of the item before it passed: the same 404 as an unknown uuid.
  await requireResourceWith(ctx, 'datasets', 'Dataset item', { id: item.dataset_id }, needed, '')
  return { id: item.id, datasetId: item.dataset_id }
}

/** The wire item of `id` (the caller's access was checked). */
async function readItem(em: Em, id: number): Promise<{ data: TDatasetItem }> {
  const [row] = await em.execute<DatasetItemRow[]>(`select ${DATASET_ITEM_COLUMNS} from dataset_items i where i.id = ?`, [id])
  if (!row) throw new NotFoundError('Dataset item')
  return { data: toDatasetItem(row) }
}

/**
 * `GET /api/v1/datasets/{dataset_uuid}/items`: a page of the dataset's items, oldest first, as the
 * paginator shape. The total is the dataset's `items_count`, read with the access check.
 * @throws NotFoundError when the dataset does not exist or is not visible to the caller.
 */
export async function list(ctx: ResourceCtx, input: TListDatasetItemsInput) {
  const dataset = await requireResourceWith<{ itemsCount: number }>(
    ctx,
    'datasets',
    'Dataset',
    input.dataset_uuid,
    'read',
    'r.items_count as "itemsCount"',
  )
  const rows = await ctx.em.execute<DatasetItemRow[]>(
    `select ${DATASET_ITEM_COLUMNS} from dataset_items i where i.dataset_id = ? order by i.id limit ? offset ?`,
    [dataset.id, input.per_page, (input.page - 1) * input.per_page],
  )
  return page(rows.map(toDatasetItem), {
    total: Number(dataset.row.itemsCount),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/datasets/${dataset.uuid}/items`,
    query: { workspace_uuid: input.workspace_uuid },
  })
}

/**
 * The items a request adds: its `items`, or those of its JSONL uploads.
 * @throws ValidationError naming `file` when both are sent, `items` when neither is, and what
 *   ./dataset-jsonl.ts throws for a bad upload.
 */
async function itemsOf(ctx: ResourceCtx, input: TCreateDatasetItemsInput): Promise<TDatasetItemInput[]> {
  if (input.items && input.file) throw new ValidationError(['file'], 'Send either items or file, not both')
  if (input.items) return input.items
  if (input.file) return readJsonlItems(ctx, input.file.keys)
  throw new ValidationError(['items'], 'Send items, or file with the keys of JSONL uploads')
}

/**
 * `POST /api/v1/datasets/{dataset_uuid}/items`: adds `items`, or the items of the JSONL uploads
 * `file.keys`, in the order sent, in one transaction with the dataset's `items_count` (and
 * `updated_at`) and the audit event: every item is checked before anything is written, so a
 * refused request stores nothing.
 * @throws NotFoundError (dataset not visible), ForbiddenError (visible without `write`),
 *   ValidationError naming `items` or `file` unless exactly one was sent, or `file.keys...` for a
 *   bad upload (./dataset-jsonl.ts).
 */
export async function add(ctx: ResourceCtx, input: TCreateDatasetItemsInput): Promise<{ data: TDatasetItem[] }> {
  const dataset = await requireResource(ctx, 'datasets', 'Dataset', input.dataset_uuid, 'write')
  const items = await itemsOf(ctx, input)
  const uuids = items.map(() => uuidv7())
  const rows = await ctx.em.transactional(async (em) => {
    const db = queries(em)
    // Counted first: the dataset's row stays locked until the items are in, so concurrent additions count one after the other.
    const counted = await db
      .updateTable('datasets')
      .set((eb) => ({ items_count: eb('items_count', '+', items.length), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', dataset.id)
      .where('deleted_at', 'is', null)
      .returning('items_count')
      .executeTakeFirst()
    if (!counted) throw new NotFoundError('Dataset')
    const inserted = await db
      .insertInto('dataset_items')
      .values((eb) =>
        items.map((item, index) => ({
          uuid: uuids[index],
          dataset_id: dataset.id,
          input: item.input,
          expected_output: item.expected_output ?? null,
          metadata: item.metadata ? eb.cast<Record<string, unknown>>(eb.val(JSON.stringify(item.metadata)), 'jsonb') : null,
          created_at: eb.fn<Date>('now'),
          updated_at: eb.fn<Date>('now'),
        })),
      )
      .returning(['id', 'uuid', 'input', 'expected_output as expectedOutput', 'metadata', 'created_at as createdAt', 'updated_at as updatedAt'])
      .execute()
    await audit(em, ctx, {
      action: 'dataset.add_items',
      resource: { type: 'dataset', uuid: dataset.uuid },
      changes: fieldChanges({ items_count: counted.items_count - items.length }, { items_count: counted.items_count }),
    })
    return inserted
  })
  // In the order sent, whatever order the insert answered its rows in.
  const byUuid = new Map(rows.map((row) => [row.uuid, toDatasetItem(row)]))
  return { data: uuids.flatMap((uuid) => byUuid.get(uuid) ?? []) }
}

/**
 * `PUT /api/v1/dataset-items/{item_uuid}`: omitted fields are kept; `null` clears
 * `expected_output` and `metadata`; `metadata`, when sent, replaces the whole object. The row is
 * locked while it changes, so the audit event's `from` is what it replaced.
 * @throws NotFoundError (item or dataset not visible), ForbiddenError (dataset visible without `write`).
 */
export async function update(ctx: ResourceCtx, input: TUpdateDatasetItemInput): Promise<{ data: TDatasetItem }> {
  const { id } = await requireItem(ctx, input.item_uuid, 'write')
  await ctx.em.transactional(async (em) => {
    const item = await em.findOne(DatasetItem, id, { lockMode: LockMode.PESSIMISTIC_WRITE })
    if (!item) throw new NotFoundError('Dataset item')
    const before = entityFields(item, AUDITED)
    em.assign(
      item,
      { input: input.input, expectedOutput: input.expected_output, metadata: input.metadata },
      { ignoreUndefined: true, mergeObjectProperties: false },
    )
    await em.flush()
    await audit(em, ctx, {
      action: 'dataset_item.update',
      resource: { type: 'dataset_item', uuid: input.item_uuid },
      changes: fieldChanges(before, entityFields(item, AUDITED)),
    })
  })
  return readItem(ctx.em, id)
}

/**
 * `DELETE /api/v1/dataset-items/{item_uuid}`: deletes the item for good and counts it out of its
 * dataset's `items_count`, in one transaction.
 * @throws NotFoundError (item or dataset not visible, or the item deleted meanwhile),
 *   ForbiddenError (dataset visible without `write`).
 */
export async function remove(ctx: ResourceCtx, uuid: string): Promise<void> {
  const item = await requireItem(ctx, uuid, 'write')
  await ctx.em.transactional(async (em) => {
    const db = queries(em)
    const deleted = await db.deleteFrom('dataset_items').where('id', '=', item.id).returning('id').executeTakeFirst()
    // A concurrent delete took it first: that one counted it.
    if (!deleted) throw new NotFoundError('Dataset item')
    await db
      .updateTable('datasets')
      .set((eb) => ({ items_count: eb('items_count', '-', 1), updated_at: eb.fn<Date>('now') }))
      .where('id', '=', item.datasetId)
      .execute()
    await audit(em, ctx, { action: 'dataset_item.delete', resource: { type: 'dataset_item', uuid } })
  })
}
