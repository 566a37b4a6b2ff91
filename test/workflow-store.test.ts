/**
 * The execution rows' group commits (src/workflows/store.ts): writes that
 * arrive together go to the database as one statement, each caller still waits for its own row,
 * the workflow's `trigger_count` counts every one, and a write that fails fails alone. Through the
 * real webhook route and the engine's store on the real database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NotFoundError } from '../src/platform/errors.ts'
import type { ExecutionResult } from '../src/workflows/executor.ts'
import { MAX_UNSETTLED } from '../src/workflows/store.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'

const hookGraph = {
  nodes: [
    { id: 'start', type: 'webhook_trigger', parameters: {} },
    { id: 'shape', type: 'set', parameters: { values: { n: '=body.n' }, static_data: { last: '=body.n' }, mode: 'replace' } },
    { id: 'reply', type: 'respond_to_webhook', parameters: {} },
  ],
  edges: [
    { id: 'e0', source: 'start', target: 'shape' },
    { id: 'e1', source: 'shape', target: 'reply' },
  ],
}

/** A succeeded result with one node row (status `status`). */
function result(n: number, status = 'succeeded'): ExecutionResult {
  const now = new Date().toISOString()
  return {
    status: 'succeeded',
    output: { n },
    error: null,
    nodes: [
      {
        position: 0,
        node_id: 'start',
        node_type: 'manual_trigger',
        status: status as 'succeeded',
        input: { n },
        output: { n },
        error: null,
        branches: null,
        attempts: 1,
        started_at: now,
        finished_at: now,
        duration_ms: 0,
      },
    ],
  }
}

describe('execution group commits', () => {
  let t: TestApp
  let alice: TestUser

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Batches' })
  })
  afterAll(async () => {
    await t?.close()
  })

  const createWorkflow = async (body: Record<string, unknown>) => {
    const response = await t.http('POST', '/api/v1/workflows', { token: alice.token, body: { name: 'Batched', ...body } })
    expect(response.status, JSON.stringify(response.body)).toBe(201)
    const data = response.body.data as { uuid: string; webhook_url: string | null }
    const [row] = await t.sql(
      'select id::float8 as id, workspace_id::float8 as "workspaceId", user_id::float8 as "userId" from workflows where uuid = ?',
      [data.uuid],
    )
    return { ...data, id: Number(row.id), workspaceId: Number(row.workspaceId), userId: Number(row.userId) }
  }

  it('answers 40 concurrent calls of one webhook, each stored with its own input and node rows, trigger_count 40', async () => {
    const flow = await createWorkflow({ ...hookGraph, is_active: true })
    const url = flow.webhook_url!.replace(t.config.appUrl, t.url)
    const answers = await Promise.all(
      Array.from({ length: 40 }, async (_, n) => {
        const response = await fetch(url, { method: 'POST', body: JSON.stringify({ n }), headers: { 'content-type': 'application/json' } })
        return { status: response.status, body: (await response.json()) as { n: number } }
      }),
    )
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200))
    expect(answers.map((a) => a.body.n)).toEqual(Array.from({ length: 40 }, (_, n) => n))
    // The answer comes when the respond node runs; the execution is settled right after.
    let rows: Record<string, unknown>[] = []
    for (let i = 0; i < 100; i++) {
      rows = await t.sql(
        `select e.status, (e.input->'body'->>'n')::int as n, (e.output->'body'->>'n')::int as output,
           (select count(*)::int from workflow_execution_data d where d.execution_id = e.id) as nodes
         from workflow_executions e where e.workflow_id = ? order by n`,
        [flow.id],
      )
      if (rows.length === 40 && rows.every((row) => row.status === 'succeeded')) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(rows).toEqual(Array.from({ length: 40 }, (_, n) => ({ status: 'succeeded', n, output: n, nodes: 3 })))
    const [workflow] = await t.sql('select trigger_count, static_data from workflows where id = ?', [flow.id])
    expect(Number(workflow.trigger_count)).toBe(40)
    // Every execution stored static data as its set node ran; the workflow keeps one of theirs, whole.
    const last = (typeof workflow.static_data === 'string' ? JSON.parse(workflow.static_data) : workflow.static_data) as { last: number }
    expect(Object.keys(last)).toEqual(['last'])
    expect(last.last).toBeGreaterThanOrEqual(0)
    expect(last.last).toBeLessThan(40)
  })

  it('fails only the insert whose workflow is gone (NotFoundError); the others of its batch are stored and counted', async () => {
    const flow = await createWorkflow({ nodes: [], edges: [] })
    const store = t.runtime.workflows.store
    const base = { userId: flow.userId, mode: 'manual' as const, status: 'queued' as const }
    const outcomes = await Promise.allSettled([
      store.insert({ ...base, workflowId: flow.id, input: { i: 0 } }),
      store.insert({ ...base, workflowId: 2_000_000_000, input: { i: 1 } }),
      store.insert({ ...base, workflowId: flow.id, input: null }),
      store.insert({ ...base, workflowId: flow.id, input: 'text' }),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled'])
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(NotFoundError)
    const stored = await t.sql(
      'select uuid, status, input::text as input, workspace_id::float8 as "workspaceId" from workflow_executions where workflow_id = ? order by id',
      [flow.id],
    )
    const records = outcomes.filter((o) => o.status === 'fulfilled').map((o) => o.value)
    expect(stored.map((row) => row.uuid)).toEqual(records.map((record) => record.uuid))
    // The workspace is the workflow's, read from its row.
    expect(stored.map((row) => Number(row.workspaceId))).toEqual([flow.workspaceId, flow.workspaceId, flow.workspaceId])
    expect(records.map((record) => record.workspaceId)).toEqual([flow.workspaceId, flow.workspaceId, flow.workspaceId])
    expect(stored.map((row) => JSON.parse(String(row.input)))).toEqual([{ i: 0 }, null, 'text'])
    expect(stored.every((row) => row.status === 'queued')).toBe(true)
    expect(records.map((record) => record.id)).toEqual([...records.map((record) => record.id)].sort((a, b) => a - b))
    const [workflow] = await t.sql('select trigger_count from workflows where id = ?', [flow.id])
    expect(Number(workflow.trigger_count)).toBe(3)
  })

  it('settles a batch in one go (durations as measured, the workflow row untouched) and fails only a settle that cannot be stored', async () => {
    const flow = await createWorkflow({ nodes: [], edges: [], static_data: { kept: true } })
    const store = t.runtime.workflows.store
    const base = {
      workflowId: flow.id,
      userId: flow.userId,
      mode: 'manual' as const,
      status: 'running' as const,
      input: {},
    }
    const records = await Promise.all(Array.from({ length: 5 }, () => store.insert(base)))

    await Promise.all(records.slice(0, 3).map((record, i) => store.settle(record.id, record.attempts, result(i), 5)))
    // Static data is stored by the node that changes it (src/workflows/static-data.ts), not by settles.
    const [afterBatch] = await t.sql('select static_data from workflows where id = ?', [flow.id])
    expect(typeof afterBatch.static_data === 'string' ? JSON.parse(afterBatch.static_data) : afterBatch.static_data).toEqual({ kept: true })

    // A node row the table refuses (an unknown status) fails its own settle; the other one of the batch is stored.
    const outcomes = await Promise.allSettled([
      store.settle(records[3].id, records[3].attempts, result(3, 'bogus'), 5),
      store.settle(records[4].id, records[4].attempts, result(4), 1234.4),
    ])
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled'])
    // duration_ms is what the process measured, and finished_at is the start plus it (not the time the batch was written).
    const rows = await t.sql(
      `select e.status, (select count(*)::int from workflow_execution_data d where d.execution_id = e.id) as nodes, e.duration_ms,
         round(extract(epoch from e.finished_at - e.started_at) * 1000)::int as finished_after
       from workflow_executions e where e.workflow_id = ? order by e.id`,
      [flow.id],
    )
    expect(rows).toEqual([
      { status: 'succeeded', nodes: 1, duration_ms: 5, finished_after: 5 },
      { status: 'succeeded', nodes: 1, duration_ms: 5, finished_after: 5 },
      { status: 'succeeded', nodes: 1, duration_ms: 5, finished_after: 5 },
      { status: 'running', nodes: 0, duration_ms: null, finished_after: null },
      { status: 'succeeded', nodes: 1, duration_ms: 1234, finished_after: 1234 },
    ])
  })

  it('holds new executions back while MAX_UNSETTLED ended ones are not stored yet', async () => {
    const flow = await createWorkflow({ nodes: [], edges: [] })
    const store = t.runtime.workflows.store
    const base = { workflowId: flow.id, userId: flow.userId, mode: 'manual' as const, input: {} }
    const [record] = await Promise.all([store.insert({ ...base, status: 'running' })])
    // More settles than the limit at once: this execution's, and ones of ids no row has (they change nothing).
    const settles = [
      store.settle(record.id, record.attempts, result(0), 1),
      ...Array.from({ length: MAX_UNSETTLED + 99 }, (_, i) => store.settle(-1 - i, 1, result(i), 1)),
    ]
    expect(store.unsettled).toBe(MAX_UNSETTLED + 100)
    const held = store.insert({ ...base, status: 'queued' }).then(() => store.unsettled)
    expect(store.held).toBe(1)
    expect(await held).toBeLessThan(MAX_UNSETTLED)
    expect(store.held).toBe(0)
    await Promise.all(settles)
    expect(store.unsettled).toBe(0)
    const rows = await t.sql(
      'select status, (select count(*)::int from workflow_execution_data d where d.execution_id = e.id) as nodes from workflow_executions e where e.workflow_id = ? order by e.id',
      [flow.id],
    )
    expect(rows).toEqual([
      { status: 'succeeded', nodes: 1 },
      { status: 'queued', nodes: 0 },
    ])
  })
})
