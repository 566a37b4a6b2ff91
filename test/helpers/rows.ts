/**
 * Row factories for resources whose routers other tests cover (tools, providers, accounts,
 * workflows, media, threads): one SQL insert each, so agent tests can bind them without going
 * through those endpoints. Each answers the new row's `id` and `uuid`.
 */
import { randomUUID } from 'node:crypto'
import type { TestApp } from './app.ts'

type Visibility = 'public' | 'private' | 'workspace'

/** A new row's keys. */
export interface RowRef {
  id: number
  uuid: string
}

/** The id of the workspace with this uuid. */
export async function workspaceId(t: TestApp, uuid: string): Promise<number> {
  const [row] = await t.sql('select id::float8 as id from workspaces where uuid = ?', [uuid])
  if (!row) throw new Error(`no workspace ${uuid}`)
  return Number(row.id)
}

/** The id of a built-in provider (`openai`, `anthropic`, `ollama`, ...). */
export async function builtinProviderId(t: TestApp, slug: string): Promise<number> {
  const [row] = await t.sql('select id::float8 as id from providers where slug = ? and is_builtin', [slug])
  return Number(row.id)
}

async function insert(t: TestApp, table: string, values: Record<string, unknown>): Promise<RowRef> {
  const uuid = randomUUID()
  const columns = ['uuid', ...Object.keys(values), 'created_at', 'updated_at']
  const placeholders = ['?', ...Object.keys(values).map(() => '?'), 'now()', 'now()']
  const [row] = await t.sql(
    `insert into ${table} (${columns.join(', ')}) values (${placeholders.join(', ')}) returning id::float8 as id, uuid`,
    [uuid, ...Object.values(values)],
  )
  return { id: Number(row.id), uuid: String(row.uuid) }
}

interface Owned {
  userId: number
  workspaceId: number
  visibility?: Visibility
  name?: string
}

/** A custom `tool` provider of a workspace (`auth_scheme` bearer unless given). */
export function insertProvider(t: TestApp, o: Owned & { authScheme?: 'bearer' | 'header' | 'query' | 'basic' | 'none' }) {
  return insert(t, 'providers', {
    slug: `p-${randomUUID().slice(0, 8)}`,
    name: o.name ?? 'Custom provider',
    type: 'tool',
    driver: 'http',
    auth_scheme: o.authScheme ?? 'bearer',
    visibility: o.visibility ?? 'workspace',
    user_id: o.userId,
    workspace_id: o.workspaceId,
  })
}

/** An `api` tool, of `providerId` when given. */
export function insertTool(t: TestApp, o: Owned & { providerId?: number | null; credits?: number }) {
  return insert(t, 'tools', {
    name: o.name ?? 'Weather lookup',
    description: 'Looks up the weather',
    visibility: o.visibility ?? 'private',
    provider_id: o.providerId ?? null,
    method: 'GET',
    url: 'https://api.example.com/weather?q={{city}}',
    credits: o.credits ?? 0,
    user_id: o.userId,
    workspace_id: o.workspaceId,
  })
}

/** An account of `providerId` whose secret only the hint stands for (the ciphertext is a placeholder). */
export function insertAccount(t: TestApp, o: Owned & { providerId: number; secretHint?: string; visibility?: 'private' | 'workspace' }) {
  return insert(t, 'accounts', {
    name: o.name ?? 'Production key',
    provider_id: o.providerId,
    visibility: o.visibility ?? 'private',
    secret_ciphertext: 'not-a-real-ciphertext-sk-test-SECRET',
    secret_key_id: 'test',
    secret_hint: o.secretHint ?? 'sk-…1234',
    user_id: o.userId,
    workspace_id: o.workspaceId,
  })
}

/** A workflow with one node. */
export function insertWorkflow(t: TestApp, o: Owned) {
  return insert(t, 'workflows', {
    name: o.name ?? 'Triage',
    description: 'Routes issues',
    visibility: o.visibility ?? 'private',
    nodes: JSON.stringify([{ id: 'start', type: 'manual_trigger', parameters: {} }]),
    edges: '[]',
    user_id: o.userId,
    workspace_id: o.workspaceId,
  })
}

/** An uploaded file's row (no bytes on disk); answers its key too. */
export async function insertMedia(t: TestApp, o: Owned & { mimeType?: string; size?: number }): Promise<RowRef & { key: string }> {
  const key = `${randomUUID()}.${o.mimeType?.startsWith('image/') ? 'png' : 'pdf'}`
  const ref = await insert(t, 'media', {
    key,
    path: `uploads/${key}`,
    original_name: o.name ?? 'handbook.pdf',
    mime_type: o.mimeType ?? 'application/pdf',
    size: o.size ?? 1234,
    user_id: o.userId,
    workspace_id: o.workspaceId,
  })
  return { ...ref, key }
}

/** A thread with an agent. */
export function insertThread(t: TestApp, o: Omit<Owned, 'visibility'> & { agentId: number }) {
  return insert(t, 'threads', { name: o.name ?? 'Chat', agent_id: o.agentId, user_id: o.userId, workspace_id: o.workspaceId })
}

/** The id of an agent by uuid. */
export async function agentId(t: TestApp, uuid: string): Promise<number> {
  const [row] = await t.sql('select id::float8 as id from agents where uuid = ?', [uuid])
  return Number(row.id)
}
