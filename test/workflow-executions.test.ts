/**
 * Reading workflow executions (routers/workflow-executions.router.ts,
 * src/workflows/workflow-executions.service.ts; docs/api/tenancy.md, docs/api/resources.md and docs/api/workflows.md): list
 * with filters and pagination, counts per status, retrieve with per-node data; visibility through
 * the workflow in the request's workspace (the executions metrics' rule), 401 and read-only
 * tokens on every operation, and validation. Executions are inserted by SQL with known statuses
 * and dates. Cancel, retry and delete: workflow-executions-actions.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { TestApp } from './helpers/app.ts'
import { expectNamed, readOnlyToken, type Member } from './helpers/agents.ts'
import { BASE, DATA_KEYS, EXECUTION_KEYS, executionsCast, uuids, type Exec, type ExecutionsCast } from './helpers/executions.ts'
import { expectErrorBody, expectStatus, hiddenCheck, USER_KEYS } from './helpers/expect.ts'

/** A 404 that says nothing of the hidden execution. */
const expectHidden = hiddenCheck('Workflow execution')

describe('workflow executions: list, counts, retrieve', () => {
  let c: ExecutionsCast
  let t: TestApp
  let alice: Member
  let carol: Member
  let bob: Member
  let wf: ExecutionsCast['wf']
  let get: ExecutionsCast['get']
  let post: ExecutionsCast['post']
  let del: ExecutionsCast['del']
  /** The executions the tests read (never changed here). */
  const ex: Record<string, Exec> = {}

  beforeAll(async () => {
    c = await executionsCast()
    ;({ t, alice, carol, bob, wf, get, post, del } = c)
    const { insert, insertData } = c
    ex.e1 = await insert('shared', {
      status: 'succeeded',
      at: '2026-04-06T00:00:00Z',
      input: { n: 1 },
      output: { ok: true },
      startedAt: '2026-04-06T00:00:01Z',
      finishedAt: '2026-04-06T00:00:03Z',
      durationMs: 2000,
    })
    ex.e2 = await insert('shared', {
      status: 'failed',
      at: '2026-04-07T23:59:59Z',
      userId: null,
      mode: 'webhook',
      input: 'raw text body',
      error: ['http_error', 'Boom', 'fetch'],
      startedAt: '2026-04-08T00:00:00Z',
      finishedAt: '2026-04-08T00:00:01.5Z',
      durationMs: 1500,
    })
    ex.e3 = await insert('shared', { status: 'running', at: '2026-04-08T00:00:00Z', userId: carol.id, startedAt: '2026-04-08T00:00:00Z' })
    ex.e4 = await insert('private', { status: 'queued', at: '2026-04-09T12:00:00Z', mode: 'schedule' })
    ex.e5 = await insert('private', { status: 'canceled', at: '2026-04-10T00:00:00Z', error: ['canceled', 'Canceled', null] })
    ex.gone = await insert('shared', { status: 'succeeded', at: '2026-04-07T00:00:00Z' })
    await t.sql('update workflow_executions set deleted_at = now() where id = ?', [ex.gone.id])
    ex.bob = await insert('bob', { status: 'failed', at: '2026-04-07T00:00:00Z', userId: bob.id, input: { secret: 'globex' } })

    // e2's nodes, inserted out of order: `data` follows `position`.
    await insertData(ex.e2, 1, {
      node_id: 'fetch',
      node_type: 'http_request',
      status: 'failed',
      input: { url: 'https://example.com' },
      error: { code: 'http_error', message: 'Boom' },
      attempts: 3,
      started_at: '2026-04-08T00:00:00.5Z',
      finished_at: '2026-04-08T00:00:01.5Z',
      duration_ms: 1000,
    })
    await insertData(ex.e2, 0, {
      node_id: 'start',
      node_type: 'webhook_trigger',
      status: 'succeeded',
      output: [{ body: 'raw text body' }],
      branches: ['main'],
      started_at: '2026-04-08T00:00:00Z',
      finished_at: '2026-04-08T00:00:00.5Z',
      duration_ms: 500,
    })
  })
  afterAll(async () => c?.t.close())

  describe('workflowExecutions.list (GET /api/v1/workflow-executions)', () => {
    it('lists the executions of the workflows the caller may see in the workspace, newest first, with exact fields', async () => {
      const res = await get(alice, BASE)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(uuids(res)).toEqual([ex.e5, ex.e4, ex.e3, ex.e2, ex.e1].map((e) => e.uuid))
      const e1 = res.body.data[4]
      expect(Object.keys(e1).sort()).toEqual(EXECUTION_KEYS)
      expect(e1).toEqual({
        uuid: ex.e1.uuid,
        workflow: { uuid: wf.shared.uuid, name: 'Shared flow' },
        status: 'succeeded',
        mode: 'manual',
        input: { n: 1 },
        output: { ok: true },
        error: null,
        retry_of_uuid: null,
        user: expect.objectContaining({ id: alice.id, name: 'Alice Liddell', email: alice.email, primary_workspace: null }),
        started_at: '2026-04-06T00:00:01.000Z',
        finished_at: '2026-04-06T00:00:03.000Z',
        duration_ms: 2000,
        trace_id: null,
        created_at: '2026-04-06T00:00:00.000Z',
        updated_at: '2026-04-06T00:00:00.000Z',
      })
      expect(Object.keys(e1.user).sort()).toEqual(USER_KEYS)
      const e2 = res.body.data[3]
      expect(e2).toMatchObject({
        mode: 'webhook',
        input: 'raw text body',
        output: null,
        user: null,
        error: { code: 'http_error', message: 'Boom', node_id: 'fetch' },
      })
      expect(res.body.data[0].error).toEqual({ code: 'canceled', message: 'Canceled', node_id: null })
      expect(res.body.meta).toMatchObject({ current_page: 1, from: 1, to: 5, last_page: 1, per_page: 15, total: 5 })
    })

    it("hides executions of a private workflow from a member who cannot see it, and never lists another tenant's", async () => {
      expect(uuids(await get(carol, BASE))).toEqual([ex.e3, ex.e2, ex.e1].map((e) => e.uuid))
      const bobs = await get(bob, BASE)
      expect(uuids(bobs)).toEqual([ex.bob.uuid])
      expect(JSON.stringify(bobs.body)).not.toContain('Shared flow')
    })

    it("lists only the executions of the request's workspace context", async () => {
      const other = await t.make.workspace(alice)
      const res = await get(alice, BASE, { 'X-Workspace-UUID': other.uuid })
      expect(res.status).toBe(200)
      expect(res.body.data).toEqual([])
      expect(res.body.meta.total).toBe(0)
    })

    it('filters by workflow_uuid, status and created_at dates (UTC, date_to inclusive through the end of its day)', async () => {
      const q = async (query: string) => uuids(await get(alice, `${BASE}?${query}`))
      expect(await q(`workflow_uuid=${wf.private.uuid}`)).toEqual([ex.e5.uuid, ex.e4.uuid])
      expect(await q(`workflow_uuid=${wf.bob.uuid}`)).toEqual([])
      expect(await q('status=failed')).toEqual([ex.e2.uuid])
      expect(await q('status=running')).toEqual([ex.e3.uuid])
      expect(await q('date_to=2026-04-07')).toEqual([ex.e2.uuid, ex.e1.uuid])
      expect(await q('date_from=2026-04-07&date_to=2026-04-08')).toEqual([ex.e3.uuid, ex.e2.uuid])
      expect(await q('date_from=2026-04-08')).toEqual([ex.e5.uuid, ex.e4.uuid, ex.e3.uuid])
      expect(await q('date_from=2026-04-08&date_to=2026-04-08')).toEqual([ex.e3.uuid])
      expect(await q(`workflow_uuid=${wf.shared.uuid}&status=succeeded&date_from=2026-04-06&date_to=2026-04-06`)).toEqual([ex.e1.uuid])
    })

    it('sorts by created_at ascending on request and pages with the paginator numbers and links', async () => {
      expect(uuids(await get(alice, `${BASE}?sort=created_at`))).toEqual([ex.e1, ex.e2, ex.e3, ex.e4, ex.e5].map((e) => e.uuid))
      const res = await get(alice, `${BASE}?per_page=2&page=2`)
      expect(uuids(res)).toEqual([ex.e3.uuid, ex.e2.uuid])
      const path = `${t.config.appUrl}${BASE}`
      expect(res.body.meta).toEqual({ current_page: 2, from: 3, last_page: 3, path, per_page: 2, to: 4, total: 5 })
      expect(res.body.links).toEqual({
        first: `${path}?sort=-created_at&page=1&per_page=2`,
        last: `${path}?sort=-created_at&page=3&per_page=2`,
        prev: `${path}?sort=-created_at&page=1&per_page=2`,
        next: `${path}?sort=-created_at&page=3&per_page=2`,
      })
      const filtered = await get(alice, `${BASE}?per_page=1&workflow_uuid=${wf.private.uuid}&date_from=2026-04-01&date_to=2026-04-30`)
      expect(filtered.body.meta).toMatchObject({ total: 2, last_page: 2, from: 1, to: 1 })
      expect(filtered.body.links.next).toBe(
        `${path}?sort=-created_at&workflow_uuid=${wf.private.uuid}&date_from=2026-04-01&date_to=2026-04-30&page=2&per_page=1`,
      )
      const past = await get(alice, `${BASE}?page=9`)
      expect(past.body.data).toEqual([])
      expect(past.body.meta).toMatchObject({ current_page: 9, from: null, to: null, total: 5 })
    })

    it('refuses bad filters with a 400 naming the field', async () => {
      const cases: [string, string][] = [
        ['workflow_uuid=not-a-uuid', 'workflow_uuid'],
        ['status=done', 'status'],
        ['date_from=2026-02-30', 'date_from'],
        ['date_to=2026-4-1', 'date_to'],
        ['date_from=2026-04-09&date_to=2026-04-08', 'date_from'],
        ['date_to=1969-12-31', 'date_to'],
        ['user_id=1', 'user_id'],
        ['per_page=101', 'per_page'],
        ['page=0', 'page'],
        ['sort=name', 'sort'],
      ]
      for (const [query, field] of cases) expectNamed(await get(alice, `${BASE}?${query}`), field)
    })
  })

  describe('workflowExecutions.counts (GET /api/v1/workflow-executions/counts)', () => {
    it('counts the visible executions per status', async () => {
      const res = await get(alice, `${BASE}/counts`)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body).toEqual({ data: { queued: 1, running: 1, succeeded: 1, failed: 1, canceled: 1, total: 5 } })
      expect((await get(carol, `${BASE}/counts`)).body.data).toEqual({ queued: 0, running: 1, succeeded: 1, failed: 1, canceled: 0, total: 3 })
      expect((await get(bob, `${BASE}/counts`)).body.data).toEqual({ queued: 0, running: 0, succeeded: 0, failed: 1, canceled: 0, total: 1 })
    })

    it('applies the workflow and date filters', async () => {
      const counts = async (query: string) => (await get(alice, `${BASE}/counts?${query}`)).body.data
      expect(await counts(`workflow_uuid=${wf.private.uuid}`)).toEqual({ queued: 1, running: 0, succeeded: 0, failed: 0, canceled: 1, total: 2 })
      expect(await counts('date_from=2026-04-07&date_to=2026-04-08')).toEqual({
        queued: 0,
        running: 1,
        succeeded: 0,
        failed: 1,
        canceled: 0,
        total: 2,
      })
      expect(await counts(`workflow_uuid=${wf.bob.uuid}`)).toMatchObject({ total: 0 })
    })

    it('refuses status, pagination, unknown filters and bad dates with a 400 naming the field', async () => {
      for (const [query, field] of [
        ['status=queued', 'status'],
        ['page=1', 'page'],
        ['fuzz=1', 'fuzz'],
        ['workflow_uuid=x', 'workflow_uuid'],
        ['date_from=2026-13-01', 'date_from'],
        ['date_from=2026-04-02&date_to=2026-04-01', 'date_from'],
      ]) {
        expectNamed(await get(alice, `${BASE}/counts?${query}`), field)
      }
    })
  })

  describe('workflowExecutions.retrieve (GET /api/v1/workflow-executions/{execution_uuid})', () => {
    it('answers the execution with its per-node data in position order', async () => {
      const res = await get(carol, `${BASE}/${ex.e2.uuid}`)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body.data).sort()).toEqual([...EXECUTION_KEYS, 'data'].sort())
      expect(res.body.data).toMatchObject({
        uuid: ex.e2.uuid,
        workflow: { uuid: wf.shared.uuid, name: 'Shared flow' },
        status: 'failed',
        mode: 'webhook',
        input: 'raw text body',
        error: { code: 'http_error', message: 'Boom', node_id: 'fetch' },
        user: null,
        started_at: '2026-04-08T00:00:00.000Z',
        finished_at: '2026-04-08T00:00:01.500Z',
        duration_ms: 1500,
      })
      const [start, fetch] = res.body.data.data
      for (const node of [start, fetch]) expect(Object.keys(node).sort()).toEqual(DATA_KEYS)
      expect(start).toEqual({
        node_id: 'start',
        node_type: 'webhook_trigger',
        status: 'succeeded',
        input: null,
        output: [{ body: 'raw text body' }],
        error: null,
        branches: ['main'],
        attempts: 1,
        started_at: '2026-04-08T00:00:00.000Z',
        finished_at: '2026-04-08T00:00:00.500Z',
        duration_ms: 500,
      })
      expect(fetch).toEqual({
        node_id: 'fetch',
        node_type: 'http_request',
        status: 'failed',
        input: { url: 'https://example.com' },
        output: null,
        error: { code: 'http_error', message: 'Boom' },
        branches: null,
        attempts: 3,
        started_at: '2026-04-08T00:00:00.500Z',
        finished_at: '2026-04-08T00:00:01.500Z',
        duration_ms: 1000,
      })
      expect((await get(alice, `${BASE}/${ex.e1.uuid}`)).body.data.data).toEqual([])
    })

    it('is the same on the tRPC surface', async () => {
      const result = await t.as(alice).workflowExecutions.retrieve({ execution_uuid: ex.e1.uuid })
      expect(result.data).toMatchObject({ uuid: ex.e1.uuid, status: 'succeeded', data: [] })
    })

    it("answers 404 for another tenant's execution, a private workflow's, a soft-deleted one and another workspace context", async () => {
      expectHidden(await get(alice, `${BASE}/${ex.bob.uuid}`), { uuid: ex.bob.uuid, name: 'Globex secret flow' })
      const bobs = await get(bob, `${BASE}/${ex.e1.uuid}`)
      expectHidden(bobs, { uuid: ex.e1.uuid, name: 'Shared flow' })
      expect(JSON.stringify(bobs.body)).not.toContain('"n"')
      expectHidden(await get(carol, `${BASE}/${ex.e4.uuid}`), { uuid: ex.e4.uuid, name: 'Private flow' })
      expectHidden(await get(alice, `${BASE}/${ex.gone.uuid}`), { uuid: ex.gone.uuid, name: 'Shared flow' })
      const other = await t.make.workspace(alice)
      expectHidden(await get(alice, `${BASE}/${ex.e1.uuid}`, { 'X-Workspace-UUID': other.uuid }), { uuid: ex.e1.uuid, name: 'Shared flow' })
      expectErrorBody(await get(alice, `${BASE}/0190c0de-0000-7000-8000-000000000000`), 404, 'NOT_FOUND', 'Workflow execution not found')
    })

    it('refuses a malformed uuid or an unknown query parameter with a 400 naming it', async () => {
      expectNamed(await get(alice, `${BASE}/0123-abcd`), 'execution_uuid')
      expectNamed(await get(alice, `${BASE}/${ex.e1.uuid}?fuzz=1`), 'fuzz')
    })
  })

  describe('authentication and read-only tokens', () => {
    it('answers 401 without a token on every operation', async () => {
      const uuid = ex.e1.uuid
      for (const [method, path] of [
        ['GET', BASE],
        ['GET', `${BASE}/counts`],
        ['GET', `${BASE}/${uuid}`],
        ['DELETE', `${BASE}/${uuid}`],
        ['POST', `${BASE}/${uuid}/cancel`],
        ['POST', `${BASE}/${uuid}/retry`],
      ]) {
        expectErrorBody(await t.http(method, path), 401, 'UNAUTHORIZED')
      }
      expect(await c.rowOf(ex.e1)).toMatchObject({ status: 'succeeded' })
    })

    it('lets a read-only token read and refuses it cancel, retry and delete (403), changing nothing', async () => {
      const reader = await readOnlyToken(t, alice)
      expect((await get(reader, BASE)).status).toBe(200)
      expect((await get(reader, `${BASE}/counts`)).status).toBe(200)
      expect((await get(reader, `${BASE}/${ex.e3.uuid}`)).status).toBe(200)
      expectStatus(await post(reader, `${BASE}/${ex.e3.uuid}/cancel`), 403, 'FORBIDDEN')
      expectStatus(await post(reader, `${BASE}/${ex.e2.uuid}/retry`), 403, 'FORBIDDEN')
      expectStatus(await del(reader, `${BASE}/${ex.e1.uuid}`), 403, 'FORBIDDEN')
      expect(await c.rowOf(ex.e3)).toMatchObject({ status: 'running' })
      expect(await c.rowOf(ex.e1)).toMatchObject({ status: 'succeeded' })
      const [{ n }] = await t.sql('select count(*)::int as n from workflow_executions where retry_of_id = ?', [ex.e2.id])
      expect(Number(n)).toBe(0)
    })
  })
})
