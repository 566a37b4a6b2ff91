/** Rows on known dates for the metrics tests (docs/api/metrics.md). */
import { expect } from 'vitest'
import type { HttpResult, TestApp } from './app.ts'
import { member, type Member } from './agents.ts'

export interface Row {
  id: number
  uuid: string
}

/** The metrics tests' cast: Erin, Frank (a `member` of Erin's primary workspace) and Bob, another tenant. */
export async function metricsCast(t: TestApp): Promise<{ erin: Member; frank: Member; bob: Member }> {
  const erin = await member(t, await t.make.user({ name: 'Erin' }))
  const frank = await member(t, await t.make.user({ name: 'Frank' }))
  const bob = await member(t, await t.make.user({ name: 'Bob' }))
  await t.make.member(erin.workspaceUuid, erin, frank, 'member')
  return { erin, frank, bob }
}

/**
 * An agent or workflow created by `user` through `POST /api/v1/<table>` in the workspace
 * `workspaceUuid`; answers its uuid and fails the test on anything but 201.
 */
export async function createIn(
  t: TestApp,
  table: 'agents' | 'workflows',
  user: { token: string },
  workspaceUuid: string,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await t.http('POST', `/api/v1/${table}`, { token: user.token, body, headers: { 'X-Workspace-UUID': workspaceUuid } })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return String(res.body.data.uuid)
}

/** Sets `created_at` of a row. */
export async function setCreated(t: TestApp, table: string, uuid: string, at: string): Promise<void> {
  await t.sql(`update ${table} set created_at = ?::timestamptz where uuid = ?`, [at, uuid])
}

async function insert(t: TestApp, table: string, values: Record<string, unknown>): Promise<Row> {
  const columns = Object.keys(values)
  const [row] = await t.sql(
    `insert into ${table} (uuid, ${columns.join(', ')}, updated_at) values (gen_random_uuid(), ${columns.map(() => '?').join(', ')}, now())
     returning id::float8 as id, uuid`,
    Object.values(values),
  )
  return { id: Number(row.id), uuid: String(row.uuid) }
}

/** A thread of `agentId` created at `at`. */
export function insertThread(
  t: TestApp,
  v: { userId: number; workspaceId: number; agentId: number; at: string; name?: string; messagesCount?: number },
): Promise<Row> {
  return insert(t, 'threads', {
    name: v.name ?? null,
    agent_id: v.agentId,
    messages_count: v.messagesCount ?? 0,
    metadata: '{}',
    user_id: v.userId,
    workspace_id: v.workspaceId,
    created_at: v.at,
  })
}

/** A message of a thread created at `at`. */
export function insertMessage(
  t: TestApp,
  v: { threadId: number; workspaceId: number; userId?: number; at: string; content?: string; tokens?: [number, number] | null; latencyMs?: number | null },
): Promise<Row> {
  const tokens = v.tokens ?? null
  return insert(t, 'messages', {
    thread_id: v.threadId,
    workspace_id: v.workspaceId,
    user_id: v.userId ?? null,
    role: 'user',
    content: v.content ?? 'hello',
    prompt_tokens: tokens ? tokens[0] : null,
    completion_tokens: tokens ? tokens[1] : null,
    total_tokens: tokens ? tokens[0] + tokens[1] : null,
    latency_ms: v.latencyMs ?? null,
    created_at: v.at,
  })
}

/** An execution of a workflow created at `at`. */
export function insertExecution(
  t: TestApp,
  v: { workflowId: number; workspaceId: number; userId?: number | null; at: string; durationMs?: number | null },
): Promise<Row> {
  return insert(t, 'workflow_executions', {
    workflow_id: v.workflowId,
    workspace_id: v.workspaceId,
    user_id: v.userId ?? null,
    status: 'succeeded',
    duration_ms: v.durationMs ?? null,
    created_at: v.at,
  })
}

/** id of a row by uuid. */
export async function idOf(t: TestApp, table: string, uuid: string): Promise<number> {
  const [row] = await t.sql(`select id::float8 as id from ${table} where uuid = ?`, [uuid])
  return Number(row.id)
}

/** A successful metrics answer: status 200, exactly `total`, `data`, `cached_at`. */
export function ok(res: HttpResult): { total: number | null; data: Record<string, unknown>[]; cached_at: string } {
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  expect(Object.keys(res.body).sort()).toEqual(['cached_at', 'data', 'total'])
  expect(res.body.cached_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
  return res.body
}
