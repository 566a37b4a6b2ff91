/**
 * `POST /v1/workflow-executions/metrics` (specification: "Metrics endpoints"; docs/api/metrics.md)
 * and `GET /api/v1/workspaces/{workspace_uuid}/metrics`: exact numbers on known dates, filters,
 * visibility through the workflow, tenant isolation and validation. Executions, threads and
 * messages are inserted by SQL (their own API is another issue).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { expectNamed, readOnlyToken, type Member } from './helpers/agents.ts'
import { createIn, idOf, insertExecution, insertMessage, insertThread, metricsCast, ok } from './helpers/metrics.ts'

describe('workflow executions and workspace metrics', () => {
  let t: TestApp
  let erin: Member
  let frank: Member
  let bob: Member
  const wf: Record<string, string> = {}

  const metric = (body: Record<string, unknown>, user: Member = erin) =>
    t.http('POST', '/v1/workflow-executions/metrics', {
      token: user.token,
      body,
      headers: { 'Cache-Control': 'no-cache', 'X-Workspace-UUID': user === bob ? bob.workspaceUuid : erin.workspaceUuid },
    })
  const count = async (filters: Record<string, unknown>, user: Member = erin) =>
    ok(await metric({ calculation: 'accumulated_count', ...filters }, user)).total

  const workflow = (user: Member, workspaceUuid: string, visibility: string) =>
    createIn(t, 'workflows', user, workspaceUuid, { name: 'Flow', visibility })

  beforeAll(async () => {
    t = await createTestApp()
    ;({ erin, frank, bob } = await metricsCast(t))
    wf.shared = await workflow(erin, erin.workspaceUuid, 'workspace')
    wf.private = await workflow(erin, erin.workspaceUuid, 'private')
    wf.bob = await workflow(bob, bob.workspaceUuid, 'workspace')
    const ws = erin.wsId
    const e = async (key: string, at: string, userId: number | null, durationMs: number | null, workspaceId = ws) =>
      insertExecution(t, { workflowId: await idOf(t, 'workflows', wf[key]), workspaceId, userId, at, durationMs })
    await e('shared', '2026-04-06T00:00:00Z', erin.id, 100)
    await e('shared', '2026-04-07T23:59:59Z', frank.id, 300)
    await e('shared', '2026-04-20T12:00:00Z', null, null)
    await e('private', '2026-04-07T10:00:00Z', erin.id, 1000)
    const gone = await e('shared', '2026-04-06T00:00:00Z', erin.id, 5)
    await t.sql('update workflow_executions set deleted_at = now() where id = ?', [gone.id])
    await e('bob', '2026-04-06T00:00:00Z', bob.id, 7, bob.wsId)
  })
  afterAll(async () => t?.close())

  describe('workflow executions', () => {
    it('counts live executions of the workflows the caller could list in the workspace', async () => {
      expect(await count({})).toBe(4)
      expect(await count({}, frank)).toBe(3)
      expect(await count({}, bob)).toBe(1)
    })

    it('time series daily, weekly and monthly with gap filling', async () => {
      const series = async (granularity: string, dates: Record<string, string> = {}) =>
        ok(await metric({ calculation: 'time_series_count', granularity, ...dates }))
      expect((await series('daily', { date_from: '2026-04-05', date_to: '2026-04-08' })).data).toEqual([
        { date: '2026-04-05', value: 0 },
        { date: '2026-04-06', value: 1 },
        { date: '2026-04-07', value: 2 },
        { date: '2026-04-08', value: 0 },
      ])
      const weekly = await series('weekly')
      expect(weekly.data).toEqual([
        { date: '2026-04-06', value: 3 },
        { date: '2026-04-13', value: 0 },
        { date: '2026-04-20', value: 1 },
      ])
      expect(weekly.total).toBe(4)
      expect((await series('monthly', { date_from: '2026-03-31', date_to: '2026-05-01' })).data).toEqual([
        { date: '2026-03-01', value: 0 },
        { date: '2026-04-01', value: 4 },
        { date: '2026-05-01', value: 0 },
      ])
    })

    it('averages duration_ms over executions that have one', async () => {
      expect(ok(await metric({ calculation: 'accumulated_average', column: 'duration_ms' }))).toMatchObject({
        total: 466.6667,
        data: [{ value: 466.6667, count: 3 }],
      })
      const weekly = ok(await metric({ calculation: 'time_series_average', granularity: 'weekly', column: 'duration_ms' }))
      expect(weekly.data).toEqual([
        { date: '2026-04-06', value: 466.6667, count: 3 },
        { date: '2026-04-13', value: null, count: 0 },
        { date: '2026-04-20', value: null, count: 0 },
      ])
      expect(await count({ column: 'duration_ms' })).toBe(3)
    })

    it('filters: user_id (triggering user), workflow_uuid, workflow_uuids, dates', async () => {
      expect(await count({ user_id: frank.id })).toBe(1)
      expect(await count({ workflow_uuid: wf.private })).toBe(1)
      expect(await count({ workflow_uuid: wf.private }, frank)).toBe(0)
      expect(await count({ workflow_uuids: [wf.shared, wf.private] })).toBe(4)
      expect(await count({ workflow_uuids: [wf.shared] })).toBe(3)
      expect(await count({ workflow_uuids: [wf.bob] })).toBe(0)
      expect(await count({ workflow_uuid: wf.bob })).toBe(0)
      expect(await count({ date_to: '2026-04-07' })).toBe(3)
      expect(await count({ date_from: '2026-04-08' })).toBe(1)
    })

    it("owners count the executions of every live workflow of the workspace (a member's private one too), members those of the workflows they could list; none of a deleted workflow", async () => {
      const franksPrivate = await workflow(frank, erin.workspaceUuid, 'private')
      const deleted = await workflow(erin, erin.workspaceUuid, 'workspace')
      const added = [
        await insertExecution(t, {
          workflowId: await idOf(t, 'workflows', franksPrivate),
          workspaceId: erin.wsId,
          userId: frank.id,
          at: '2026-04-09T00:00:00Z',
        }),
        await insertExecution(t, {
          workflowId: await idOf(t, 'workflows', deleted),
          workspaceId: erin.wsId,
          userId: erin.id,
          at: '2026-04-09T00:00:00Z',
        }),
      ]
      try {
        expect(await count({ date_from: '2026-04-09', date_to: '2026-04-09' })).toBe(2)
        expect(await count({ date_from: '2026-04-09', date_to: '2026-04-09' }, frank)).toBe(2)
        expect(
          (
            await t.http('DELETE', `/api/v1/workflows/${deleted}`, {
              token: erin.token,
              headers: { 'X-Workspace-UUID': erin.workspaceUuid },
            })
          ).status,
        ).toBe(204)
        expect(await count({ date_from: '2026-04-09', date_to: '2026-04-09' })).toBe(1)
        expect(await count({ date_from: '2026-04-09', date_to: '2026-04-09' }, frank)).toBe(1)
        expect(await count({ workflow_uuid: franksPrivate })).toBe(1)
        expect(await count({ workflow_uuid: deleted })).toBe(0)
      } finally {
        // Leave the workspace as the other tests count it.
        await t.sql('update workflows set deleted_at = now() where uuid in (?, ?)', [franksPrivate, deleted])
        await t.sql(
          `update workflow_executions set deleted_at = now() where id in (${added.map(() => '?').join(', ')})`,
          added.map((row) => row.id),
        )
      }
    })

    it('validation: unknown filters, bad types, unknown column', async () => {
      const bad = async (body: Record<string, unknown>, field: string) => expectNamed(await metric(body), field)
      await bad({ calculation: 'accumulated_count', workspace_uuid: erin.workspaceUuid }, 'workspace_uuid')
      await bad({ calculation: 'accumulated_count', search: 'x' }, 'search')
      await bad({ calculation: 'accumulated_count', workflow_uuids: wf.shared }, 'workflow_uuids')
      await bad({ calculation: 'accumulated_count', workflow_uuids: ['nope'] }, 'workflow_uuids')
      await bad({ calculation: 'accumulated_count', workflow_uuid: [wf.shared] }, 'workflow_uuid')
      await bad({ calculation: 'accumulated_average', column: 'trigger_count' }, 'column')
      await bad({ calculation: 'accumulated_average', column: '*' }, 'column')
      await bad({ calculation: 'time_series_average', column: 'duration_ms' }, 'granularity')
    })
  })

  describe('GET /api/v1/workspaces/{workspace_uuid}/metrics', () => {
    it('counts live rows of each kind, members, runs and tokens; any member may read it', async () => {
      const agentRes = await t.http('POST', '/api/v1/agents', {
        token: erin.token,
        body: { name: 'A' },
        headers: { 'X-Workspace-UUID': erin.workspaceUuid },
      })
      const agentId = await idOf(t, 'agents', agentRes.body.data.uuid)
      const thread = await insertThread(t, { userId: erin.id, workspaceId: erin.wsId, agentId, at: '2026-04-06T00:00:00Z' })
      await insertMessage(t, { threadId: thread.id, workspaceId: erin.wsId, at: '2026-04-06T00:00:00Z', tokens: [10, 2] })
      await insertMessage(t, { threadId: thread.id, workspaceId: erin.wsId, at: '2026-04-06T00:00:00Z', tokens: [3, 0] })
      await insertMessage(t, { threadId: thread.id, workspaceId: erin.wsId, at: '2026-04-06T00:00:00Z', tokens: null })
      // A run (the built-in local model: no provider key here) adds its thread, two messages and its tokens.
      const ran = await t.http('POST', `/api/v1/agents/${agentRes.body.data.uuid}/run`, {
        token: erin.token,
        body: { input: 'count me' },
        headers: { 'X-Workspace-UUID': erin.workspaceUuid },
      })
      expect(ran.status, JSON.stringify(ran.body)).toBe(200)
      const runTokens = ran.body.data.usage.total_tokens
      expect(runTokens).toBeGreaterThan(0)
      for (const user of [erin, frank]) {
        const res = await t.http('GET', `/api/v1/workspaces/${erin.workspaceUuid}/metrics`, { token: user.token })
        expect(res.status, JSON.stringify(res.body)).toBe(200)
        expect(res.body).toEqual({
          data: {
            agents: 1,
            prompts: 0,
            workflows: 2,
            tools: 0,
            accounts: 0,
            threads: 2,
            messages: 5,
            workflow_executions: 4,
            members: 2,
            runs: 1,
            tokens: 15 + runTokens,
          },
        })
      }
    })

    it('404 for a non-member (another tenant), 401 without a token, 400 naming a bad or unknown parameter', async () => {
      const res = await t.http('GET', `/api/v1/workspaces/${erin.workspaceUuid}/metrics`, { token: bob.token })
      expect(res.status).toBe(404)
      expect(JSON.stringify(res.body)).not.toContain('Erin')
      expect((await t.http('GET', `/api/v1/workspaces/${erin.workspaceUuid}/metrics`)).status).toBe(401)
      expectNamed(await t.http('GET', '/api/v1/workspaces/0123-abcd/metrics', { token: erin.token }), 'workspace_uuid')
      expectNamed(
        await t.http('GET', `/api/v1/workspaces/${erin.workspaceUuid}/metrics?calculation=accumulated_count`, { token: erin.token }),
        'calculation',
      )
    })

    it('a read-only token may read it', async () => {
      const readOnly = await readOnlyToken(t, erin)
      const res = await t.http('GET', `/api/v1/workspaces/${erin.workspaceUuid}/metrics`, { token: readOnly.token })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data.members).toBe(2)
    })
  })
})
