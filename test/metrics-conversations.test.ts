/**
 * `POST /v1/threads/metrics` and `POST /v1/messages/metrics` (specification: "Metrics endpoints";
 * docs/api/metrics.md): exact numbers on known dates, filters, which threads a caller counts (own
 * threads; every thread of the workspace for its owners and admins), messages through their
 * thread's workspace, tenant isolation and validation. Threads and messages are inserted by SQL
 * (their own API is another issue).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { expectNamed, type Member } from './helpers/agents.ts'
import { createIn, idOf, insertMessage, insertThread, metricsCast, ok, type Row } from './helpers/metrics.ts'

describe('threads and messages metrics', () => {
  let t: TestApp
  let erin: Member
  let frank: Member
  let bob: Member
  let agentF: string
  let bobThread: Row
  const threads: Record<string, Row> = {}

  const metric = (resource: string, body: Record<string, unknown>, user: Member = erin) =>
    t.http('POST', `/v1/${resource}/metrics`, {
      token: user.token,
      body,
      headers: { 'Cache-Control': 'no-cache', 'X-Workspace-UUID': user === bob ? bob.workspaceUuid : erin.workspaceUuid },
    })
  const count = async (resource: string, filters: Record<string, unknown>, user: Member = erin) =>
    ok(await metric(resource, { calculation: 'accumulated_count', ...filters }, user)).total

  const agent = (user: Member, workspaceUuid: string) => createIn(t, 'agents', user, workspaceUuid, { name: 'Helper', visibility: 'workspace' })

  beforeAll(async () => {
    t = await createTestApp()
    ;({ erin, frank, bob } = await metricsCast(t))
    const agentE = await idOf(t, 'agents', await agent(erin, erin.workspaceUuid))
    agentF = await agent(frank, erin.workspaceUuid)
    const agentFId = await idOf(t, 'agents', agentF)
    const agentB = await idOf(t, 'agents', await agent(bob, bob.workspaceUuid))
    const ws = erin.wsId
    threads.T1 = await insertThread(t, { userId: erin.id, workspaceId: ws, agentId: agentE, at: '2026-03-02T09:00:00Z', name: 'Planning 50%', messagesCount: 4 })
    threads.T2 = await insertThread(t, { userId: erin.id, workspaceId: ws, agentId: agentE, at: '2026-03-03T23:59:59Z', name: 'Chat', messagesCount: 1 })
    threads.T3 = await insertThread(t, { userId: frank.id, workspaceId: ws, agentId: agentFId, at: '2026-03-03T10:00:00Z', name: 'Frank chat', messagesCount: 2 })
    threads.T4 = await insertThread(t, { userId: erin.id, workspaceId: ws, agentId: agentFId, at: '2026-03-16T00:00:00Z', messagesCount: 7 })
    const deleted = await insertThread(t, { userId: erin.id, workspaceId: ws, agentId: agentE, at: '2026-03-02T09:00:00Z', messagesCount: 9 })
    await t.sql('update threads set deleted_at = now() where id = ?', [deleted.id])
    bobThread = await insertThread(t, { userId: bob.id, workspaceId: bob.wsId, agentId: agentB, at: '2026-03-02T09:00:00Z', name: 'Planning', messagesCount: 50 })

    const m = (thread: Row, at: string, content: string, tokens: [number, number] | null, latencyMs: number | null, workspaceId = ws) =>
      insertMessage(t, { threadId: thread.id, workspaceId, at, content, tokens, latencyMs })
    await m(threads.T1, '2026-03-02T09:01:00Z', 'hello world', [10, 5], 100)
    await m(threads.T1, '2026-03-04T12:00:00Z', 'second', [20, 10], 200)
    await m(threads.T2, '2026-03-03T23:59:59Z', 'find the NEEDLE', null, null)
    await m(threads.T3, '2026-03-03T10:05:00Z', 'frank says hi', [1, 1], 50)
    await m(threads.T4, '2026-03-16T00:00:00Z', 'snake_case 100%', [7, 0], 10)
    const gone = await m(threads.T1, '2026-03-02T09:02:00Z', 'deleted needle', [1000, 1000], 1)
    await t.sql('update messages set deleted_at = now() where id = ?', [gone.id])
    await m(bobThread, '2026-03-02T09:01:00Z', 'needle of bob 100%_', [500, 500], 9, bob.wsId)
    // A live message of a deleted thread: counted for nobody, owner or member.
    await m(deleted, '2026-03-03T08:00:00Z', 'needle in a deleted thread', [300, 300], 30)
  })
  afterAll(async () => t?.close())

  describe('threads', () => {
    it('counts the live threads of the workspace for its owner; a member counts own threads only', async () => {
      expect(await count('threads', {})).toBe(4)
      expect(await count('threads', {}, frank)).toBe(1)
      expect(await count('threads', {}, bob)).toBe(1)
    })

    it('time series daily, weekly (Monday) and monthly, gap-filled', async () => {
      const series = async (granularity: string, dates: Record<string, string> = {}) =>
        ok(await metric('threads', { calculation: 'time_series_count', granularity, ...dates }))
      const daily = await series('daily', { date_from: '2026-03-02', date_to: '2026-03-04' })
      expect(daily.data).toEqual([
        { date: '2026-03-02', value: 1 },
        { date: '2026-03-03', value: 2 },
        { date: '2026-03-04', value: 0 },
      ])
      expect(daily.total).toBe(3)
      const weekly = await series('weekly')
      expect(weekly.data).toEqual([
        { date: '2026-03-02', value: 3 },
        { date: '2026-03-09', value: 0 },
        { date: '2026-03-16', value: 1 },
      ])
      expect((await series('monthly')).data).toEqual([{ date: '2026-03-01', value: 4 }])
    })

    it('averages messages_count, per period and in total', async () => {
      expect(ok(await metric('threads', { calculation: 'accumulated_average', column: 'messages_count' }))).toMatchObject({
        total: 3.5,
        data: [{ value: 3.5, count: 4 }],
      })
      const weekly = ok(await metric('threads', { calculation: 'time_series_average', granularity: 'weekly', column: 'messages_count' }))
      expect(weekly.data).toEqual([
        { date: '2026-03-02', value: 2.3333, count: 3 },
        { date: '2026-03-09', value: null, count: 0 },
        { date: '2026-03-16', value: 7, count: 1 },
      ])
      expect(weekly.total).toBe(3.5)
    })

    it('filters: user_id, agent_uuid, search over name and message content (% and _ literal), workspace_uuid, dates', async () => {
      expect(await count('threads', { user_id: frank.id })).toBe(1)
      expect(await count('threads', { agent_uuid: agentF })).toBe(2)
      expect(await count('threads', { search: 'PLANNING' })).toBe(1)
      expect(await count('threads', { search: 'needle' })).toBe(1)
      expect(await count('threads', { search: '%' })).toBe(2)
      expect(await count('threads', { search: '_' })).toBe(1)
      expect(await count('threads', { search: "') or 1=1 --" })).toBe(0)
      expect(await count('threads', { workspace_uuid: erin.workspaceUuid })).toBe(4)
      expect(await count('threads', { date_to: '2026-03-03' })).toBe(3)
      expect(await count('threads', { date_from: '2026-03-03', date_to: '2026-03-03' })).toBe(2)
    })

    it("another tenant's workspace_uuid is 404; another tenant's agent_uuid counts nothing", async () => {
      const res = await t.http('POST', '/v1/threads/metrics', {
        token: erin.token,
        body: { calculation: 'accumulated_count', workspace_uuid: bob.workspaceUuid },
      })
      expect(res.status).toBe(404)
      expect(await count('threads', { agent_uuid: agentF }, bob)).toBe(0)
    })

    it('validation: unknown filters and columns, bad types', async () => {
      const bad = async (body: Record<string, unknown>, field: string) => expectNamed(await metric('threads', body), field)
      await bad({ calculation: 'accumulated_count', visibility: 'public' }, 'visibility')
      await bad({ calculation: 'accumulated_count', thread_uuid: threads.T1.uuid }, 'thread_uuid')
      await bad({ calculation: 'accumulated_average', column: 'usage_count' }, 'column')
      await bad({ calculation: 'accumulated_average', column: '*' }, 'column')
      await bad({ calculation: 'accumulated_count', agent_uuid: 'x' }, 'agent_uuid')
      await bad({ calculation: 'accumulated_count', user_id: 1.5 }, 'user_id')
      await bad({ calculation: 'time_series_count', granularity: 'yearly' }, 'granularity')
      await bad({ calculation: 'accumulated_count', date_from: '2026-13-01' }, 'date_from')
    })
  })

  describe('messages', () => {
    it('counts live messages of the counted threads, in the workspace of their thread', async () => {
      expect(await count('messages', {})).toBe(5)
      expect(await count('messages', {}, frank)).toBe(1)
      expect(await count('messages', {}, bob)).toBe(1)
    })

    it('a numeric column counts its non-null values; * counts rows', async () => {
      expect(await count('messages', { column: 'total_tokens' })).toBe(4)
      expect(await count('messages', { column: '*' })).toBe(5)
    })

    it('time series daily, weekly, monthly', async () => {
      const daily = ok(await metric('messages', { calculation: 'time_series_count', granularity: 'daily', date_from: '2026-03-02', date_to: '2026-03-05' }))
      expect(daily.data).toEqual([
        { date: '2026-03-02', value: 1 },
        { date: '2026-03-03', value: 2 },
        { date: '2026-03-04', value: 1 },
        { date: '2026-03-05', value: 0 },
      ])
      expect(daily.total).toBe(4)
      const weekly = ok(await metric('messages', { calculation: 'time_series_count', granularity: 'weekly' }))
      expect(weekly.data).toEqual([
        { date: '2026-03-02', value: 4 },
        { date: '2026-03-09', value: 0 },
        { date: '2026-03-16', value: 1 },
      ])
      const monthly = ok(await metric('messages', { calculation: 'time_series_count', granularity: 'monthly', date_from: '2026-02-10' }))
      expect(monthly.data).toEqual([
        { date: '2026-02-01', value: 0 },
        { date: '2026-03-01', value: 5 },
      ])
    })

    it('averages every numeric column over the records that have a value', async () => {
      const average = async (column: string) => ok(await metric('messages', { calculation: 'accumulated_average', column })).data[0]
      expect(await average('total_tokens')).toEqual({ value: 13.5, count: 4 })
      expect(await average('prompt_tokens')).toEqual({ value: 9.5, count: 4 })
      expect(await average('completion_tokens')).toEqual({ value: 4, count: 4 })
      expect(await average('latency_ms')).toEqual({ value: 90, count: 4 })
      const daily = ok(
        await metric('messages', { calculation: 'time_series_average', granularity: 'daily', column: 'total_tokens', date_from: '2026-03-02', date_to: '2026-03-04' }),
      )
      expect(daily.data).toEqual([
        { date: '2026-03-02', value: 15, count: 1 },
        { date: '2026-03-03', value: 2, count: 1 },
        { date: '2026-03-04', value: 30, count: 1 },
      ])
      expect(daily.total).toBe(15.6667)
    })

    it('filters: search (literal % and _), thread_uuid; another tenant thread counts nothing', async () => {
      expect(await count('messages', { search: 'needle' })).toBe(1)
      expect(await count('messages', { search: '%' })).toBe(1)
      expect(await count('messages', { search: '_' })).toBe(1)
      expect(await count('messages', { search: '\\' })).toBe(0)
      expect(await count('messages', { thread_uuid: threads.T1.uuid })).toBe(2)
      expect(await count('messages', { thread_uuid: bobThread.uuid })).toBe(0)
      expect(await count('messages', { thread_uuid: threads.T1.uuid }, frank)).toBe(0)
    })

    it('validation: unknown filters (workspace_uuid, user_id), unknown column, bad thread_uuid', async () => {
      const bad = async (body: Record<string, unknown>, field: string) => expectNamed(await metric('messages', body), field)
      await bad({ calculation: 'accumulated_count', workspace_uuid: erin.workspaceUuid }, 'workspace_uuid')
      await bad({ calculation: 'accumulated_count', user_id: erin.id }, 'user_id')
      await bad({ calculation: 'accumulated_average', column: 'messages_count' }, 'column')
      await bad({ calculation: 'accumulated_average', column: 'cost' }, 'column')
      await bad({ calculation: 'accumulated_count', thread_uuid: 5 }, 'thread_uuid')
      await bad({ calculation: 'accumulated_count', search: 5 }, 'search')
      await bad({ calculation: 'accumulated_count', date_to: '2026-02-30' }, 'date_to')
    })
  })
})
