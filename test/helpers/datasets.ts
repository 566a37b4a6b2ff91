/**
 * Fixtures for the dataset tests (test/datasets.test.ts): the keys of the Dataset and DatasetItem
 * shapes, factories over REST, shares inserted directly, JSONL uploads, and the stored state a
 * refused request must leave alone.
 */
import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import type { TestApp, TestUser } from './app.ts'
import { hiddenCheck } from './expect.ts'
import { uploadKey } from './media.ts'

/** Keys of the Dataset shape. */
export const DATASET_KEYS = ['created_at', 'description', 'is_owner', 'items_count', 'name', 'updated_at', 'user', 'uuid', 'visibility', 'workspace']

/** Keys of the DatasetItem shape. */
export const ITEM_KEYS = ['created_at', 'expected_output', 'input', 'metadata', 'updated_at', 'uuid']

/** A Dataset or DatasetItem as answered over REST (JSON, loosely typed for assertions). */
export type Json = { uuid: string } & Record<string, any>

/** Creates a dataset over REST as `user`, in `workspaceUuid` (default: the user's primary). */
export async function makeDataset(t: TestApp, user: { token: string }, body: Record<string, unknown> = {}, workspaceUuid?: string): Promise<Json & { name: string }> {
  const res = await t.http('POST', '/api/v1/datasets', {
    token: user.token,
    headers: workspaceUuid ? { 'x-workspace-uuid': workspaceUuid } : {},
    body: { name: `Dataset ${randomBytes(3).toString('hex')}`, ...body },
  })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data
}

/** Adds items over REST as `user`; answers the items added. */
export async function addItems(t: TestApp, user: { token: string }, datasetUuid: string, items: Record<string, unknown>[], headers: Record<string, string> = {}): Promise<Json[]> {
  const res = await t.http('POST', `/api/v1/datasets/${datasetUuid}/items`, { token: user.token, headers, body: { items } })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data
}

/** `n` items `{input: "<prefix> i"}`. */
export const numbered = (n: number, prefix = 'case'): { input: string }[] => Array.from({ length: n }, (_, i) => ({ input: `${prefix} ${i + 1}` }))

/** Shares a dataset with a user (by id) or a workspace (by uuid) by inserting the row directly. */
export async function shareDataset(
  t: TestApp,
  datasetUuid: string,
  entity: { user: number } | { workspace: string },
  permission: 'read' | 'write' | 'admin',
): Promise<void> {
  const [type, entityId] =
    'user' in entity ? ['user', entity.user] : ['workspace', (await t.sql('select id from workspaces where uuid = ?', [entity.workspace]))[0].id]
  await t.sql(
    `insert into shares (resource_type, resource_id, entity_type, entity_id, permission, created_at, updated_at)
     values ('datasets', (select id from datasets where uuid = ?), ?, ?, ?, now(), now())`,
    [datasetUuid, type, entityId, permission],
  )
}

/** Uploads `text` through `POST /api/v1/media` as `filename`; answers its key. */
export function uploadText(t: TestApp, user: TestUser, text: string, filename = 'cases.jsonl'): Promise<string> {
  return uploadKey(t, user.token, { bytes: Buffer.from(text), filename, type: 'application/octet-stream' })
}

/** JSON Lines of these values, one per line. */
export const jsonl = (values: unknown[]): string => values.map((value) => JSON.stringify(value)).join('\n')

/** The stored rows of every dataset and item, and the datasets' audit events: what a refused request must not change. */
export async function storedState(t: TestApp): Promise<unknown[]> {
  return [
    await t.sql('select uuid, name, description, visibility, items_count, deleted_at, updated_at from datasets order by id'),
    await t.sql('select uuid, dataset_id, input, expected_output, metadata::text as metadata, updated_at from dataset_items order by id'),
    await t.sql(`select count(*)::int as n from audit_events where action like 'dataset%'`),
  ]
}

/** A dataset's stored `items_count` and the number of its item rows. */
export async function counts(t: TestApp, datasetUuid: string): Promise<{ column: number; rows: number }> {
  const [row] = await t.sql(
    'select d.items_count as "column", (select count(*)::int from dataset_items i where i.dataset_id = d.id) as "rows" from datasets d where d.uuid = ?',
    [datasetUuid],
  )
  return { column: Number(row.column), rows: Number(row.rows) }
}

/** A 404 that says nothing of the hidden dataset. */
export const expectDatasetHidden = hiddenCheck('Dataset')
/** A 404 that says nothing of the hidden item (its `name` is its input). */
export const expectItemHidden = hiddenCheck('Dataset item')
