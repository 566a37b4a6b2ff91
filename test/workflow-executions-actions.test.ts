/**
 * Acting on workflow executions (routers/workflow-executions.router.ts,
 * src/workflows/workflow-executions.service.ts; docs/api/tenancy.md, docs/api/resources.md and docs/api/workflows.md):
 * cancel (one conditional update, then the engine's `abort`), retry (a new queued execution with
 * mode `retry`, handed to the durable queue; the end-to-end runs are in workflow-runs.test.ts),
 * delete (hard, the node data cascades, gone from the metrics too); 409s, permissions and
 * another tenant's executions. Reads: workflow-executions.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { EXECUTION_JOB } from '../src/workflows/engine.ts'
import type { TestApp } from './helpers/app.ts'
import { expectNamed, type Member } from './helpers/agents.ts'
import { BASE, EXECUTION_KEYS, executionsCast, uuids, type Exec, type ExecutionsCast } from './helpers/executions.ts'
import { expectStatus, hiddenCheck, ISO } from './helpers/expect.ts'

/** A 404 that says nothing of the hidden execution. */
const expectHidden = hiddenCheck('Workflow execution')

describe('workflow executions: cancel, retry, delete', () => {
  let c: ExecutionsCast
  let t: TestApp
  let alice: Member
  let carol: Member
  let bob: Member
  let wf: ExecutionsCast['wf']
  let insert: ExecutionsCast['insert']
  let insertData: ExecutionsCast['insertData']
  let rowOf: ExecutionsCast['rowOf']
  let get: ExecutionsCast['get']
  let post: ExecutionsCast['post']
  let del: ExecutionsCast['del']
  /** An execution of alice's private workflow (hidden from carol) and one of bob's. */
  const ex: Record<'private' | 'bob', Exec> = { private: { id: 0, uuid: '' }, bob: { id: 0, uuid: '' } }

  beforeAll(async () => {
    c = await executionsCast()
    ;({ t, alice, carol, bob, wf, insert, insertData, rowOf, get, post, del } = c)
    ex.private = await insert('private', { status: 'canceled', at: '2026-04-10T00:00:00Z' })
    ex.bob = await insert('bob', { status: 'failed', at: '2026-04-07T00:00:00Z', userId: bob.id })
  })
  afterAll(async () => c?.t.close())

  describe('workflowExecutions.cancel (POST /api/v1/workflow-executions/{execution_uuid}/cancel)', () => {
    it('cancels a running execution: canceled, finished now, duration from started_at', async () => {
      const target = await insert('ops', { status: 'running', at: '2026-05-01T00:00:00Z' })
      await t.sql("update workflow_executions set started_at = now() - interval '5 seconds' where id = ?", [target.id])
      // carol has `read` on the workflow (workspace visibility): enough to cancel.
      const res = await post(carol, `${BASE}/${target.uuid}/cancel`)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toMatchObject({
        uuid: target.uuid,
        status: 'canceled',
        error: { code: 'canceled', message: 'Canceled', node_id: null },
      })
      expect(res.body.data.finished_at).toMatch(ISO)
      expect(res.body.data.duration_ms).toBeGreaterThanOrEqual(5000)
      expect(res.body.data.duration_ms).toBeLessThan(60_000)
      expect(await rowOf(target)).toMatchObject({ status: 'canceled', error_code: 'canceled', error: 'Canceled' })
    })

    it('cancels a queued execution without a duration', async () => {
      const queued = await insert('ops', { status: 'queued', at: '2026-05-01T00:00:00Z' })
      const res = await post(alice, `${BASE}/${queued.uuid}/cancel`)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toMatchObject({ status: 'canceled', started_at: null, duration_ms: null })
      expect(res.body.data.finished_at).toMatch(ISO)
    })

    it('answers 409 for an execution that has already ended, and leaves it unchanged', async () => {
      for (const status of ['succeeded', 'failed', 'canceled']) {
        const ended = await insert('ops', { status, at: '2026-05-01T00:00:00Z', durationMs: 10 })
        expectStatus(await post(alice, `${BASE}/${ended.uuid}/cancel`), 409, 'CONFLICT')
        expect(await rowOf(ended)).toMatchObject({ status, duration_ms: 10, finished_at: null })
      }
    })

    it("answers 404 for another tenant's execution and 400 naming a malformed uuid or an unknown body field", async () => {
      const bobRunning = await insert('bob', { status: 'running', at: '2026-05-01T00:00:00Z', userId: bob.id })
      expectHidden(await post(alice, `${BASE}/${bobRunning.uuid}/cancel`), { uuid: bobRunning.uuid, name: 'Globex secret flow' })
      expect(await rowOf(bobRunning)).toMatchObject({ status: 'running' })
      expectNamed(await post(alice, `${BASE}/0123-abcd/cancel`), 'execution_uuid')
      expectNamed(await t.http('POST', `${BASE}/${bobRunning.uuid}/cancel`, { token: alice.token, body: { fuzz: 1 } }), 'fuzz')
    })
  })

  describe('workflowExecutions.retry (POST /api/v1/workflow-executions/{execution_uuid}/retry)', () => {
    const triggerCount = async () => Number((await t.sql('select trigger_count from workflows where id = ?', [wf.ops.id]))[0].trigger_count)

    it('queues a new execution with mode retry, the original input, retry_of the original and the caller as user: 202', async () => {
      const failed = await insert('ops', { status: 'failed', at: '2026-05-02T00:00:00Z', input: { items: [1, 2], text: 'héllo' }, error: ['x', 'y', 'n1'] })
      const before = await triggerCount()
      const res = await post(carol, `${BASE}/${failed.uuid}/retry`)
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      expect(Object.keys(res.body.data).sort()).toEqual(EXECUTION_KEYS)
      expect(res.body.data).toMatchObject({
        workflow: { uuid: wf.ops.uuid, name: 'Ops flow' },
        status: 'queued',
        mode: 'retry',
        input: { items: [1, 2], text: 'héllo' },
        output: null,
        error: null,
        retry_of_uuid: failed.uuid,
        user: { id: carol.id },
        started_at: null,
        finished_at: null,
        duration_ms: null,
      })
      expect(res.body.data.uuid).not.toBe(failed.uuid)
      const retried = { id: 0, uuid: String(res.body.data.uuid) }
      const [row] = await t.sql(
        `select id::float8 as id, status, mode, retry_of_id::float8 as retry_of_id, user_id, input::text as input from workflow_executions where uuid = ?`,
        [retried.uuid],
      )
      expect(row).toMatchObject({ status: 'queued', mode: 'retry', retry_of_id: failed.id, user_id: carol.id })
      expect(JSON.parse(String(row.input))).toEqual({ items: [1, 2], text: 'héllo' })
      expect(await triggerCount()).toBe(before + 1)
      // Handed to the durable queue: its pg-boss job has the execution's uuid as id.
      const boss = await t.runtime.jobs.start()
      expect(await boss.getJobById(EXECUTION_JOB, retried.uuid)).toMatchObject({ data: { execution_id: Number(row.id) } })
      expect(await rowOf(failed)).toMatchObject({ status: 'failed' })
    })

    it('retries a canceled execution too, and a null input stays null', async () => {
      const canceled = await insert('ops', { status: 'canceled', at: '2026-05-02T00:00:00Z' })
      const res = await post(alice, `${BASE}/${canceled.uuid}/retry`)
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      expect(res.body.data).toMatchObject({ input: null, retry_of_uuid: canceled.uuid, user: { id: alice.id } })
    })

    it('answers 409 for a queued, running or succeeded execution and creates nothing', async () => {
      for (const status of ['queued', 'running', 'succeeded']) {
        const e = await insert('ops', { status, at: '2026-05-02T00:00:00Z' })
        const before = await triggerCount()
        expectStatus(await post(alice, `${BASE}/${e.uuid}/retry`), 409, 'CONFLICT')
        expect(await triggerCount()).toBe(before)
        const [{ n }] = await t.sql('select count(*)::int as n from workflow_executions where retry_of_id = ?', [e.id])
        expect(Number(n)).toBe(0)
      }
    })

    it("answers 404 for another tenant's execution and for a private workflow's the caller cannot see", async () => {
      const before = Number((await t.sql('select count(*)::int as n from workflow_executions'))[0].n)
      expectHidden(await post(alice, `${BASE}/${ex.bob.uuid}/retry`), { uuid: ex.bob.uuid, name: 'Globex secret flow' })
      expectHidden(await post(carol, `${BASE}/${ex.private.uuid}/retry`), { uuid: ex.private.uuid, name: 'Private flow' })
      expect(Number((await t.sql('select count(*)::int as n from workflow_executions'))[0].n)).toBe(before)
      expectNamed(await post(alice, `${BASE}/1/retry`), 'execution_uuid')
      expectNamed(await post(alice, `${BASE}/${ex.private.uuid}/retry`, { fuzz: 1 }), 'fuzz')
    })
  })

  describe('workflowExecutions.delete (DELETE /api/v1/workflow-executions/{execution_uuid})', () => {
    const metricCount = async () => {
      const res = await t.http('POST', '/v1/workflow-executions/metrics', {
        token: alice.token,
        body: { calculation: 'accumulated_count', workflow_uuid: wf.ops.uuid },
        headers: { 'Cache-Control': 'no-cache' },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      return res.body.total
    }

    it('deletes an ended execution and its node data (204); it leaves the list, the counts and the metrics', async () => {
      const done = await insert('ops', { status: 'succeeded', at: '2026-05-03T00:00:00Z' })
      await insertData(done, 0, { node_id: 'start', node_type: 'manual_trigger', status: 'succeeded' })
      const metricsBefore = await metricCount()
      const countsBefore = (await get(alice, `${BASE}/counts?workflow_uuid=${wf.ops.uuid}`)).body.data
      const res = await del(alice, `${BASE}/${done.uuid}`)
      expect(res.status, JSON.stringify(res.body)).toBe(204)
      expect(res.body).toBeNull()
      expect(await t.sql('select id from workflow_executions where id = ?', [done.id])).toEqual([])
      expect(await t.sql('select id from workflow_execution_data where execution_id = ?', [done.id])).toEqual([])
      expect(await metricCount()).toBe(metricsBefore - 1)
      const countsAfter = (await get(alice, `${BASE}/counts?workflow_uuid=${wf.ops.uuid}`)).body.data
      expect(countsAfter).toEqual({ ...countsBefore, succeeded: countsBefore.succeeded - 1, total: countsBefore.total - 1 })
      expect(uuids(await get(alice, `${BASE}?workflow_uuid=${wf.ops.uuid}&per_page=100`))).not.toContain(done.uuid)
      expectHidden(await get(alice, `${BASE}/${done.uuid}`), { uuid: done.uuid, name: 'Ops flow' })
      expectHidden(await del(alice, `${BASE}/${done.uuid}`), { uuid: done.uuid, name: 'Ops flow' })
    })

    it('answers 409 while queued or running (cancel first), and deletes once canceled', async () => {
      for (const status of ['queued', 'running']) {
        const e = await insert('ops', { status, at: '2026-05-03T00:00:00Z' })
        const res = await del(alice, `${BASE}/${e.uuid}`)
        expectStatus(res, 409, 'CONFLICT')
        expect(res.body.message).toContain('cancel')
        expect(await rowOf(e)).toMatchObject({ status })
        expect((await post(alice, `${BASE}/${e.uuid}/cancel`)).status).toBe(200)
        expect((await del(alice, `${BASE}/${e.uuid}`)).status).toBe(204)
      }
    })

    it("needs write on the workflow (403 for a member with read), and answers 404 for another tenant's or a hidden one", async () => {
      const done = await insert('ops', { status: 'failed', at: '2026-05-03T00:00:00Z' })
      expectStatus(await del(carol, `${BASE}/${done.uuid}`), 403, 'FORBIDDEN')
      expectHidden(await del(carol, `${BASE}/${ex.private.uuid}`), { uuid: ex.private.uuid, name: 'Private flow' })
      expectHidden(await del(bob, `${BASE}/${done.uuid}`), { uuid: done.uuid, name: 'Ops flow' })
      expectHidden(await del(alice, `${BASE}/${ex.bob.uuid}`), { uuid: ex.bob.uuid, name: 'Globex secret flow' })
      expect(await rowOf(done)).toMatchObject({ status: 'failed' })
      expect(await rowOf(ex.private)).toMatchObject({ status: 'canceled' })
      expect(await rowOf(ex.bob)).toMatchObject({ status: 'failed' })
      expectNamed(await del(alice, `${BASE}/0123-abcd`), 'execution_uuid')
    })
  })
})
