/**
 * Fixtures for the prompt tests (test/prompts.test.ts, test/prompts-update.test.ts): the keys of
 * the specification's Prompt shape, a factory, shares and uploads inserted directly.
 */
import { randomBytes } from 'node:crypto'
import { expect } from 'vitest'
import type { TestApp, TestUser } from './app.ts'
import { hiddenCheck } from './expect.ts'
import { insertMedia as insertMediaRow, workspaceId } from './rows.ts'

/** Keys of the specification's Prompt shape. */
export const PROMPT_KEYS = [
  'content',
  'created_at',
  'description',
  'is_owner',
  'metadata',
  'name',
  'profile_photo_config',
  'profile_photo_url',
  'updated_at',
  'user',
  'uuid',
  'visibility',
  'workspace',
]

/** Two declared inputs, as a client sends them. */
export const TWO_INPUTS = [
  { key: 'topic', label: 'Topic', type: 'text', required: true },
  { key: 'tone', label: 'Tone', type: 'select', required: false, options: ['formal', 'casual'] },
]

/** A prompt row as stored, for before/after comparisons. */
export async function storedPrompt(t: TestApp, uuid: string): Promise<Record<string, unknown>> {
  const [row] = await t.sql('select row_to_json(p)::text as row from prompts p where uuid = ?', [uuid])
  return JSON.parse(String(row.row))
}

/** A Prompt as answered over REST (JSON, loosely typed for assertions). */
export type PromptJson = { uuid: string; name: string } & Record<string, any>

/** Creates a prompt over REST as `user`, in `workspaceUuid` (default: the user's primary). */
export async function makePrompt(
  t: TestApp,
  user: TestUser,
  body: Record<string, unknown> = {},
  workspaceUuid?: string,
): Promise<PromptJson> {
  const res = await t.http('POST', '/api/v1/prompts', {
    token: user.token,
    headers: workspaceUuid ? { 'x-workspace-uuid': workspaceUuid } : {},
    body: { name: `Prompt ${randomBytes(3).toString('hex')}`, content: 'Write about {{topic}}.', ...body },
  })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data
}

/** Shares a prompt with a user (by id) or a workspace (by uuid) by inserting the row directly. */
export async function sharePrompt(
  t: TestApp,
  promptUuid: string,
  entity: { user: number } | { workspace: string },
  permission: 'read' | 'write' | 'admin',
): Promise<void> {
  const [type, entityId] =
    'user' in entity ? ['user', entity.user] : ['workspace', (await t.sql('select id from workspaces where uuid = ?', [entity.workspace]))[0].id]
  await t.sql(
    `insert into shares (resource_type, resource_id, entity_type, entity_id, permission, created_at, updated_at)
     values ('prompts', (select id from prompts where uuid = ?), ?, ?, ?, now(), now())`,
    [promptUuid, type, entityId, permission],
  )
}

/** An upload of `user` in their primary workspace, inserted directly; answers its key. */
export async function insertMedia(t: TestApp, user: TestUser, mimeType = 'image/png'): Promise<string> {
  const row = await insertMediaRow(t, { userId: user.id, workspaceId: await workspaceId(t, user.workspaceUuid), mimeType, name: 'photo' })
  return row.key
}

/** A 404 that says nothing of the hidden prompt. */
export const expectHidden = hiddenCheck('Prompt')
