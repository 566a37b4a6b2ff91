/**
 * Command room tasks (docs/api/command-room.md): every operation's happy path, each validation
 * rule, 401, another tenant's 404 and read-only 403; the schedule rules as pure functions
 * (daylight-saving changes, cron in a zone, missed due times); and the scheduler for real: a once
 * task firing within seconds, "run now", missed due times firing once, pause and resume, a failing
 * model call, a deleted agent. Agent firings run against test/helpers/upstream.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, hiddenCheck, UUID } from './helpers/expect.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { until } from './helpers/processes.ts'
import { dueAfterFiring, firstDueAt, nextDueAfter } from '../src/command-room/schedule.ts'

const TASK_KEYS = [
  'agent', 'created_at', 'firings_count', 'input', 'is_active', 'is_owner', 'last_run_at', 'last_status', 'name', 'next_run_at', 'run_at',
  'schedule', 'timezone', 'updated_at', 'user', 'uuid', 'workflow', 'workspace',
]
const FIRING_KEYS = ['due_at', 'error', 'execution_uuid', 'fired_at', 'run_uuid', 'status', 'thread_uuid', 'uuid']
const TASKS = '/api/v1/command-room/tasks'
const expectHidden = hiddenCheck('Command room task')
const at = (iso: string) => new Date(iso)

describe('command room schedules (pure)', () => {
  it('daily repeats run_at wall-clock time in the zone across both daylight-saving changes', () => {
    const spec = { schedule: 'daily', timezone: 'Europe/Paris', runAt: at('2026-03-27T08:00:00Z') } // 09:00 CET
    expect(firstDueAt(spec, at('2026-03-27T07:00:00Z'))).toEqual(at('2026-03-27T08:00:00Z'))
    const saturday = nextDueAfter(spec, at('2026-03-27T08:00:00Z'))
    expect(saturday).toEqual(at('2026-03-28T08:00:00Z'))
    // Sunday 29 March: clocks go forward; 09:00 is now CEST (UTC+2).
    expect(nextDueAfter(spec, saturday!)).toEqual(at('2026-03-29T07:00:00Z'))
    // Sunday 25 October: back to CET.
    expect(nextDueAfter(spec, at('2026-10-24T07:00:00Z'))).toEqual(at('2026-10-25T08:00:00Z'))
  })

  it('a daily wall-clock time the spring change skips fires an hour later; one the autumn change repeats fires once', () => {
    const spec = { schedule: 'daily', timezone: 'Europe/Paris', runAt: at('2026-03-27T01:30:00Z') } // 02:30 CET
    expect(nextDueAfter(spec, at('2026-03-28T01:30:00Z'))).toEqual(at('2026-03-29T01:30:00Z')) // 03:30 CEST
    const autumn = nextDueAfter(spec, at('2026-10-24T00:30:00Z'))
    expect(autumn).toEqual(at('2026-10-25T00:30:00Z')) // the first 02:30 (CEST)
    expect(nextDueAfter(spec, autumn!)).toEqual(at('2026-10-26T01:30:00Z')) // not the second 02:30 that night
  })

  it('hourly fires every real hour across a change; weekly keeps weekday and local time', () => {
    const hourly = { schedule: 'hourly', timezone: 'Europe/Paris', runAt: at('2026-10-24T22:15:00Z') }
    const seen: string[] = []
    let due = hourly.runAt
    for (let i = 0; i < 5; i++) seen.push((due = nextDueAfter(hourly, due)!).toISOString())
    expect(seen).toEqual(['2026-10-24T23:15:00.000Z', '2026-10-25T00:15:00.000Z', '2026-10-25T01:15:00.000Z', '2026-10-25T02:15:00.000Z', '2026-10-25T03:15:00.000Z'])
    // Monday 26 October 2026, 10:00 in New York (EDT); the US changes on 1 November.
    const weekly = { schedule: 'weekly', timezone: 'America/New_York', runAt: at('2026-10-26T14:00:00Z') }
    expect(nextDueAfter(weekly, weekly.runAt)).toEqual(at('2026-11-02T15:00:00Z')) // 10:00 EST
  })

  it('a cron expression is read in the zone, from run_at on, across a change', () => {
    const spec = { schedule: '0 9 * * 1-5', timezone: 'Europe/Paris', runAt: at('2026-03-27T00:00:00Z') }
    expect(firstDueAt(spec, at('2026-03-26T00:00:00Z'))).toEqual(at('2026-03-27T08:00:00Z')) // Friday 09:00 CET
    expect(nextDueAfter(spec, at('2026-03-27T08:00:00Z'))).toEqual(at('2026-03-30T07:00:00Z')) // Monday 09:00 CEST
  })

  it('once fires at run_at only; missed due times collapse into one firing and the schedule goes on from now', () => {
    const once = { schedule: 'once', timezone: 'UTC', runAt: at('2026-05-01T12:00:00Z') }
    expect(firstDueAt(once, at('2026-05-01T11:00:00Z'))).toEqual(once.runAt)
    expect(dueAfterFiring(once, once.runAt, at('2026-05-01T12:00:01Z'))).toBeNull()
    const daily = { schedule: 'daily', timezone: 'UTC', runAt: at('2026-05-01T12:00:00Z') }
    // Down from the 2nd to the 5th at 15:00: the 2nd's due time fires once, next is the 6th.
    expect(dueAfterFiring(daily, at('2026-05-02T12:00:00Z'), at('2026-05-05T15:00:00Z'))).toEqual(at('2026-05-06T12:00:00Z'))
  })
})

describe('command room tasks', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  let bob: TestUser
  let agentUuid: string
  let workflowUuid: string

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '3000' })
    alice = await t.make.user({ name: 'Alice Commander' })
    bob = await t.make.user({ name: 'Bob Outsider' })
    agentUuid = (await t.as(alice).agents.create({ name: 'Inbox summariser', instruction: 'Summarise.' } as never)).data.uuid
    const flow = await t.http('POST', '/api/v1/workflows', {
      token: alice.token,
      body: {
        name: 'Nightly flow',
        nodes: [
          { id: 'start', type: 'manual_trigger', parameters: {} },
          { id: 'shape', type: 'set', parameters: { values: { greeting: "='Hello ' & $.name" } } },
        ],
        edges: [{ id: 'e0', source: 'start', target: 'shape' }],
      },
    })
    expect(flow.status, JSON.stringify(flow.body)).toBe(201)
    workflowUuid = flow.body.data.uuid
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  const post = (user: { token: string }, body: Record<string, unknown>) => t.http('POST', TASKS, { token: user.token, body })
  const store = async (body: Record<string, unknown>, user: TestUser = alice) => {
    const res = await post(user, { name: 'Task', ...body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data
  }
  const halfHourAgo = () => new Date(Date.now() - 1_800_000).toISOString()
  const task = async (uuid: string) => (await t.http('GET', `${TASKS}/${uuid}`, { token: alice.token })).body.data
  const firings = async (uuid: string) => (await t.http('GET', `${TASKS}/${uuid}/firings`, { token: alice.token })).body
  const count = async () => Number((await t.sql('select count(*)::int as n from command_room_tasks'))[0].n)
  /** Waits until the task's newest firing has ended. */
  const ended = async (uuid: string, ms = 15_000) =>
    (await until(() => firings(uuid), (page) => page.data.length > 0 && !['queued', 'running'].includes(page.data[0].status), ms)).data[0]

  describe('store, read, update, remove', () => {
    it('stores an agent task (201) with every field of the Task shape, and retrieves and lists it', async () => {
      const runAt = new Date(Date.now() + 3_600_000).toISOString()
      const res = await post(alice, { name: 'Summarise the inbox', agent_uuid: agentUuid, input: 'Summarise my inbox', schedule: 'daily', timezone: 'Europe/Paris', run_at: runAt })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      const data = res.body.data
      expect(Object.keys(data).sort()).toEqual(TASK_KEYS)
      expect(data).toMatchObject({
        name: 'Summarise the inbox',
        agent: { uuid: agentUuid, name: 'Inbox summariser' },
        workflow: null,
        input: 'Summarise my inbox',
        schedule: 'daily',
        timezone: 'Europe/Paris',
        run_at: runAt,
        is_active: true,
        next_run_at: runAt,
        last_run_at: null,
        last_status: null,
        firings_count: 0,
        is_owner: true,
      })
      expect(data.user.id).toBe(alice.id)
      expect(data.workspace.uuid).toBe(alice.workspaceUuid)
      expect((await t.http('GET', `${TASKS}/${data.uuid}`, { token: alice.token })).body.data).toEqual(data)
      const listed = await t.http('GET', `${TASKS}?agent_uuid=${agentUuid}&is_active=true`, { token: alice.token })
      expect(listed.status).toBe(200)
      expect(listed.body.data.map((item: { uuid: string }) => item.uuid)).toContain(data.uuid)
      expect(listed.body.meta.total).toBeGreaterThanOrEqual(1)
    })

    it('stores a workflow task with an object input; defaults: UTC, the next whole minute, an empty input', async () => {
      const data = await store({ workflow_uuid: workflowUuid, schedule: '*/5 * * * *' })
      expect(data).toMatchObject({ agent: null, workflow: { uuid: workflowUuid, name: 'Nightly flow' }, input: {}, timezone: 'UTC', is_active: true })
      expect(new Date(data.run_at).getUTCSeconds()).toBe(0)
      expect(new Date(data.next_run_at).getUTCMinutes() % 5).toBe(0)
      const agentTask = await store({ agent_uuid: agentUuid, schedule: 'hourly', is_active: false })
      expect(agentTask).toMatchObject({ input: '', is_active: false, next_run_at: null })
      const filtered = await t.http('GET', `${TASKS}?workflow_uuid=${workflowUuid}`, { token: alice.token })
      expect(filtered.body.data.every((item: { workflow: { uuid: string } | null }) => item.workflow?.uuid === workflowUuid)).toBe(true)
      const inactive = await t.http('GET', `${TASKS}?is_active=false`, { token: alice.token })
      expect(inactive.body.data.map((item: { uuid: string }) => item.uuid)).toContain(agentTask.uuid)
      expect(inactive.body.data.every((item: { is_active: boolean }) => !item.is_active)).toBe(true)
    })

    it('updates: pausing clears next_run_at, resuming recomputes it from now; a new target resets the input', async () => {
      const data = await store({ agent_uuid: agentUuid, input: 'hi', schedule: 'daily', run_at: new Date(Date.now() - 86_400_000 * 3 + 3_600_000).toISOString() })
      // run_at in the past: a repeating task goes on from now (tomorrow's time is not fired late).
      expect(new Date(data.next_run_at).getTime()).toBeGreaterThan(Date.now())
      const paused = await t.http('PUT', `${TASKS}/${data.uuid}`, { token: alice.token, body: { is_active: false, name: 'Renamed' } })
      expect(paused.status, JSON.stringify(paused.body)).toBe(200)
      expect(paused.body.data).toMatchObject({ is_active: false, next_run_at: null, name: 'Renamed', input: 'hi' })
      const resumed = await t.http('PUT', `${TASKS}/${data.uuid}`, { token: alice.token, body: { is_active: true, schedule: '30 8 * * *', timezone: 'Asia/Tokyo' } })
      expect(resumed.body.data).toMatchObject({ is_active: true, schedule: '30 8 * * *', timezone: 'Asia/Tokyo' })
      const next = new Date(resumed.body.data.next_run_at)
      expect([next.getUTCHours(), next.getUTCMinutes()]).toEqual([23, 30]) // 08:30 in Tokyo
      const retargeted = await t.http('PUT', `${TASKS}/${data.uuid}`, { token: alice.token, body: { workflow_uuid: workflowUuid } })
      expect(retargeted.body.data).toMatchObject({ agent: null, workflow: { uuid: workflowUuid }, input: {} })
    })

    it('removes (204): gone from reads and lists, its future firings stopped', async () => {
      const data = await store({ agent_uuid: agentUuid, schedule: 'hourly' })
      const res = await t.http('DELETE', `${TASKS}/${data.uuid}`, { token: alice.token })
      expect(res.status).toBe(204)
      expectHidden(await t.http('GET', `${TASKS}/${data.uuid}`, { token: alice.token }), data)
      const list = await t.http('GET', TASKS, { token: alice.token, headers: {} })
      expect(list.body.data.map((item: { uuid: string }) => item.uuid)).not.toContain(data.uuid)
      const [row] = await t.sql('select is_active, next_run_at from command_room_tasks where uuid = ?', [data.uuid])
      expect(row).toMatchObject({ is_active: false, next_run_at: null })
    })
  })

  describe('validation: 400 naming the field, nothing stored', () => {
    const base = () => ({ name: 'Bad', agent_uuid: agentUuid, schedule: 'daily' })
    const cases: [string, () => Record<string, unknown>, string][] = [
      ['an invalid cron expression', () => ({ ...base(), schedule: '61 * * * *' }), 'schedule'],
      ['a cron expression of six fields', () => ({ ...base(), schedule: '0 0 9 * * *' }), 'schedule'],
      ['a cron expression that never fires', () => ({ ...base(), schedule: '0 0 30 2 *' }), 'schedule'],
      ['an unknown time zone', () => ({ ...base(), timezone: 'Mars/Olympus_Mons' }), 'timezone'],
      ['a fixed offset instead of a zone', () => ({ ...base(), timezone: '+01:00' }), 'timezone'],
      ['once without run_at', () => ({ ...base(), schedule: 'once' }), 'run_at'],
      ['once in the past', () => ({ ...base(), schedule: 'once', run_at: new Date(Date.now() - 60_000).toISOString() }), 'run_at'],
      ['both an agent and a workflow', () => ({ ...base(), workflow_uuid: workflowUuid }), 'workflow_uuid'],
      ['neither an agent nor a workflow', () => ({ name: 'Bad', schedule: 'daily' }), 'agent_uuid'],
      ['an object input for an agent', () => ({ ...base(), input: { text: 'hi' } }), 'input'],
      ['a string input for a workflow', () => ({ name: 'Bad', workflow_uuid: workflowUuid, schedule: 'daily', input: 'hi' }), 'input'],
      ['an input that is neither', () => ({ ...base(), input: 42 }), 'input'],
      ['an unknown agent', () => ({ ...base(), agent_uuid: '00000000-0000-4000-8000-000000000000' }), 'agent_uuid'],
      ['a malformed run_at', () => ({ ...base(), run_at: 'tomorrow' }), 'run_at'],
      ['a blank name', () => ({ ...base(), name: '  ' }), 'name'],
    ]
    for (const [label, body, field] of cases) {
      it(label, async () => {
        const before = await count()
        const res = await post(alice, body())
        expect(res.status, JSON.stringify(res.body)).toBe(400)
        expect(res.body.issues.map((issue: { path: string[] }) => issue.path.join('.'))).toContain(field)
        expect(await count()).toBe(before)
      })
    }

    it("another tenant's agent or workflow is a 400 naming the field, as an unknown uuid", async () => {
      const bobAgent = (await t.as(bob).agents.create({ name: 'Bob secret agent', instruction: 'x' } as never)).data
      const bobFlow = (await t.http('POST', '/api/v1/workflows', { token: bob.token, body: { name: 'Bob secret flow' } })).body.data
      const before = await count()
      const agentRes = await post(alice, { name: 'x', agent_uuid: bobAgent.uuid, schedule: 'daily' })
      expect(agentRes.status).toBe(400)
      expect(agentRes.body.issues[0].path).toEqual(['agent_uuid'])
      expect(JSON.stringify(agentRes.body)).not.toContain('Bob secret')
      const flowRes = await post(alice, { name: 'x', workflow_uuid: bobFlow.uuid, schedule: 'daily', input: {} })
      expect(flowRes.body.issues[0].path).toEqual(['workflow_uuid'])
      expect(await count()).toBe(before)
    })

    it('PUT checks the same rules and changes nothing on a 400', async () => {
      // run_at half an hour ago, so no firing changes the task between the two reads.
      const data = await store({ agent_uuid: agentUuid, schedule: 'daily', run_at: halfHourAgo(), input: 'keep' })
      for (const [body, field] of [
        [{ schedule: 'not a cron' }, 'schedule'],
        [{ timezone: 'Nowhere/Land' }, 'timezone'],
        [{ input: { a: 1 } }, 'input'],
        [{ agent_uuid: agentUuid, workflow_uuid: workflowUuid }, 'workflow_uuid'],
        [{ schedule: 'once', run_at: new Date(Date.now() - 1000).toISOString() }, 'run_at'],
        [{ workflow_uuid: '00000000-0000-4000-8000-000000000000' }, 'workflow_uuid'],
      ] as const) {
        const res = await t.http('PUT', `${TASKS}/${data.uuid}`, { token: alice.token, body })
        expect(res.status, JSON.stringify(body)).toBe(400)
        expect(res.body.issues[0].path).toEqual([field])
      }
      expect(await task(data.uuid)).toEqual(data)
    })
  })

  describe('access', () => {
    it('401 without a token on every operation', async () => {
      const data = await store({ agent_uuid: agentUuid, schedule: 'daily' })
      for (const [method, path] of [
        ['POST', TASKS], ['GET', TASKS], ['GET', `${TASKS}/${data.uuid}`], ['PUT', `${TASKS}/${data.uuid}`],
        ['DELETE', `${TASKS}/${data.uuid}`], ['POST', `${TASKS}/${data.uuid}/run`], ['GET', `${TASKS}/${data.uuid}/firings`],
      ]) {
        const res = await t.http(method, path, method === 'POST' || method === 'PUT' ? { body: {} } : {})
        expectErrorBody(res, 401, 'UNAUTHORIZED')
      }
    })

    it("another tenant gets 404 on every operation of a task and never sees it listed; nothing changes", async () => {
      // run_at half an hour ago: a daily task first fires a day later, so nothing changes it mid-test.
      const data = await store({ agent_uuid: agentUuid, schedule: 'daily', name: 'Alice private task', run_at: halfHourAgo() })
      for (const [method, path, body] of [
        ['GET', `${TASKS}/${data.uuid}`, undefined],
        ['PUT', `${TASKS}/${data.uuid}`, { name: 'Hijacked' }],
        ['DELETE', `${TASKS}/${data.uuid}`, undefined],
        ['POST', `${TASKS}/${data.uuid}/run`, undefined],
        ['GET', `${TASKS}/${data.uuid}/firings`, undefined],
      ] as const) {
        expectHidden(await t.http(method, path, { token: bob.token, ...(body ? { body } : {}) }), data)
      }
      expect((await t.http('GET', TASKS, { token: bob.token })).body.data).toEqual([])
      expect(await task(data.uuid)).toEqual(data)
      expect((await firings(data.uuid)).data).toEqual([])
    })

    it("a member of the workspace does not see the owner's task either (tasks are their owner's)", async () => {
      const carol = await t.make.user({ name: 'Carol Member' })
      await t.make.member(alice.workspaceUuid, alice, carol, 'admin')
      const data = await store({ agent_uuid: agentUuid, schedule: 'daily' })
      expectHidden(await t.http('GET', `${TASKS}/${data.uuid}`, { token: carol.token, headers: { 'x-workspace-uuid': alice.workspaceUuid } }), data)
    })

    it('a read-only token reads (200) but gets 403 on store, update, remove and run', async () => {
      const data = await store({ agent_uuid: agentUuid, schedule: 'daily', run_at: halfHourAgo() })
      const readOnly = await readOnlyToken(t, alice)
      expect((await t.http('GET', `${TASKS}/${data.uuid}`, { token: readOnly.token })).status).toBe(200)
      expect((await t.http('GET', `${TASKS}/${data.uuid}/firings`, { token: readOnly.token })).status).toBe(200)
      for (const [method, path, body] of [
        ['POST', TASKS, { name: 'x', agent_uuid: agentUuid, schedule: 'daily' }],
        ['PUT', `${TASKS}/${data.uuid}`, { name: 'x' }],
        ['DELETE', `${TASKS}/${data.uuid}`, undefined],
        ['POST', `${TASKS}/${data.uuid}/run`, undefined],
      ] as const) {
        expectErrorBody(await t.http(method, path, { token: readOnly.token, ...(body ? { body } : {}) }), 403, 'FORBIDDEN')
      }
      expect(await task(data.uuid)).toEqual(data)
    })
  })

  describe('firing', () => {
    it('run now (202) fires an agent run in a new thread of the owner with the input, linked from the firing', async () => {
      const data = await store({ agent_uuid: agentUuid, schedule: 'daily', input: 'What is new today?', is_active: false })
      const res = await t.http('POST', `${TASKS}/${data.uuid}/run`, { token: alice.token })
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      expect(Object.keys(res.body.data).sort()).toEqual(FIRING_KEYS)
      expect(res.body.data).toMatchObject({ status: 'queued', run_uuid: null })
      const firing = await ended(data.uuid)
      expect(firing, JSON.stringify(firing)).toMatchObject({ uuid: res.body.data.uuid, status: 'succeeded', error: null, execution_uuid: null })
      expect(firing.run_uuid).toMatch(UUID)
      expect(firing.thread_uuid).toMatch(UUID)
      const run = await t.http('GET', `/api/v1/runs/${firing.run_uuid}`, { token: alice.token })
      expect(run.body.data.run).toMatchObject({ status: 'succeeded', output: 'Echo: What is new today?', thread_uuid: firing.thread_uuid, agent_uuid: agentUuid })
      expect((await t.http('GET', `/api/v1/threads/${firing.thread_uuid}`, { token: alice.token })).status).toBe(200)
      expect(await task(data.uuid)).toMatchObject({ firings_count: 1, last_status: 'succeeded', is_active: false, next_run_at: null })
      expect((await task(data.uuid)).last_run_at).not.toBeNull()
    })

    it('a once task fires within seconds of run_at, once; then next_run_at is null', async () => {
      const runAt = new Date(Date.now() + 1_500)
      const data = await store({ agent_uuid: agentUuid, schedule: 'once', run_at: runAt.toISOString(), input: 'Once only' })
      const firing = await ended(data.uuid)
      expect(firing.status).toBe('succeeded')
      expect(firing.due_at).toBe(runAt.toISOString())
      expect(new Date(firing.fired_at).getTime() - runAt.getTime()).toBeLessThan(5_000)
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect((await firings(data.uuid)).data).toHaveLength(1)
      expect(await task(data.uuid)).toMatchObject({ next_run_at: null, firings_count: 1, last_status: 'succeeded', is_active: true })
    })

    it('a workflow task fires an execution with its input', async () => {
      const data = await store({ workflow_uuid: workflowUuid, schedule: 'daily', input: { name: 'Ada' }, is_active: false })
      await t.http('POST', `${TASKS}/${data.uuid}/run`, { token: alice.token })
      const firing = await ended(data.uuid)
      expect(firing).toMatchObject({ status: 'succeeded', run_uuid: null, thread_uuid: null })
      const execution = await t.http('GET', `/api/v1/workflow-executions/${firing.execution_uuid}`, { token: alice.token })
      expect(execution.body.data).toMatchObject({ status: 'succeeded', mode: 'manual' })
      expect(JSON.stringify(execution.body.data)).toContain('Hello Ada')
    })

    it('due times missed while nothing ran fire once, and the schedule goes on from now', async () => {
      // run_at half an hour ago: the next regular due time is half an hour away (a run_at still to
      // come would be a due time of its own, seconds from now).
      const runAt = new Date(Date.now() - 1_800_000).toISOString()
      const data = await store({ agent_uuid: agentUuid, schedule: 'hourly', run_at: runAt, input: 'catch up', is_active: true })
      // As if every process had been down for three days: next_run_at far in the past.
      await t.sql(`update command_room_tasks set next_run_at = now() - interval '3 days' where uuid = ?`, [data.uuid])
      const firing = await ended(data.uuid)
      expect(firing.status).toBe('succeeded')
      await new Promise((resolve) => setTimeout(resolve, 2_000))
      expect((await firings(data.uuid)).data).toHaveLength(1)
      const after = await task(data.uuid)
      expect(new Date(after.next_run_at).getTime()).toBeGreaterThan(Date.now())
      expect(new Date(after.next_run_at).getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000)
    })

    it('a paused task does not fire; resumed, it fires from its next due time', async () => {
      // run_at half an hour ago, so the due time after resuming is half an hour away (the default
      // run_at, the next whole minute, could come during the waits below).
      const data = await store({ agent_uuid: agentUuid, schedule: 'hourly', run_at: new Date(Date.now() - 1_800_000).toISOString(), input: 'paused' })
      await t.http('PUT', `${TASKS}/${data.uuid}`, { token: alice.token, body: { is_active: false } })
      // Even a due time already past stays unfired while paused.
      await t.sql(`update command_room_tasks set next_run_at = now() - interval '1 minute' where uuid = ?`, [data.uuid])
      await new Promise((resolve) => setTimeout(resolve, 2_500))
      expect((await firings(data.uuid)).data).toEqual([])
      const resumed = (await t.http('PUT', `${TASKS}/${data.uuid}`, { token: alice.token, body: { is_active: true } })).body.data
      expect(new Date(resumed.next_run_at).getTime()).toBeGreaterThan(Date.now())
      await new Promise((resolve) => setTimeout(resolve, 1_500))
      expect((await firings(data.uuid)).data).toEqual([])
    })

    it('a failing model call is one failed firing, not retried; the task stays active', async () => {
      upstream.enqueue({ kind: 'status', status: 500 }, { kind: 'status', status: 500 }, { kind: 'status', status: 500 })
      // run_at half an hour ago: the default, the next whole minute, could fire again during the wait.
      const data = await store({ agent_uuid: agentUuid, schedule: 'daily', run_at: new Date(Date.now() - 1_800_000).toISOString(), input: 'fail please' })
      await t.http('POST', `${TASKS}/${data.uuid}/run`, { token: alice.token })
      const firing = await ended(data.uuid)
      expect(firing.status).toBe('failed')
      expect(firing.error).toBeTruthy()
      expect(firing.run_uuid).toMatch(UUID)
      await new Promise((resolve) => setTimeout(resolve, 1_000))
      expect((await firings(data.uuid)).data).toHaveLength(1)
      expect(await task(data.uuid)).toMatchObject({ is_active: true, last_status: 'failed' })
    })

    it('a firing whose agent was deleted fails with the reason and deactivates the task', async () => {
      const doomed = (await t.as(alice).agents.create({ name: 'Doomed agent', instruction: 'x' } as never)).data
      const data = await store({ agent_uuid: doomed.uuid, schedule: 'daily', input: 'hello' })
      expect((await t.http('DELETE', `/api/v1/agents/${doomed.uuid}`, { token: alice.token })).status).toBe(204)
      await t.http('POST', `${TASKS}/${data.uuid}/run`, { token: alice.token })
      const firing = await ended(data.uuid)
      expect(firing.status).toBe('failed')
      expect(firing.error).toMatch(/deactivated/)
      expect(await task(data.uuid)).toMatchObject({ is_active: false, next_run_at: null, last_status: 'failed', agent: null })
    })

    it('a firing the owner may no longer make (left the workspace) fails and deactivates the task', async () => {
      const dave = await t.make.user({ name: 'Dave Leaver' })
      const shared = await t.make.workspace(alice)
      await t.make.member(shared.uuid, alice, dave)
      const flow = await t.http('POST', '/api/v1/workflows', {
        token: dave.token,
        headers: { 'x-workspace-uuid': shared.uuid },
        body: { name: 'Dave flow', nodes: [{ id: 'start', type: 'manual_trigger', parameters: {} }], edges: [] },
      })
      const created = await t.http('POST', TASKS, {
        token: dave.token,
        headers: { 'x-workspace-uuid': shared.uuid },
        body: { name: 'Dave task', workflow_uuid: flow.body.data.uuid, schedule: 'daily' },
      })
      expect(created.status, JSON.stringify(created.body)).toBe(201)
      await t.sql(`delete from workspace_members where user_id = ? and workspace_id = (select id from workspaces where uuid = ?)`, [dave.id, shared.uuid])
      await t.sql(`update command_room_tasks set next_run_at = now() where uuid = ?`, [created.body.data.uuid])
      const [row] = await until(
        () => t.sql(`select status, error from command_room_task_firings f join command_room_tasks t on t.id = f.task_id where t.uuid = ?`, [created.body.data.uuid]),
        (rows) => rows.length > 0 && rows[0].status === 'failed',
        10_000,
      )
      expect(String(row.error)).toMatch(/no longer a member/)
      const [stored] = await t.sql(`select is_active, last_status from command_room_tasks where uuid = ?`, [created.body.data.uuid])
      expect(stored).toMatchObject({ is_active: false, last_status: 'failed' })
    })
  })

  describe('firing due times, directly', () => {
    it('records one firing per task and due time, however many processes fire at once', async () => {
      const data = await store({ agent_uuid: agentUuid, schedule: 'daily', input: 'tick', is_active: false })
      await t.sql(`update command_room_tasks set is_active = true, next_run_at = '2020-01-01T00:00:00Z' where uuid = ?`, [data.uuid])
      const engine = t.runtime.commandRoom
      await Promise.all([engine.fireDue(), engine.fireDue(), engine.fireDue()])
      const rows = await t.sql(`select f.due_at from command_room_task_firings f join command_room_tasks t on t.id = f.task_id where t.uuid = ?`, [data.uuid])
      expect(rows).toHaveLength(1)
      expect(new Date(rows[0].due_at as string).toISOString()).toBe('2020-01-01T00:00:00.000Z')
      await ended(data.uuid)
    })
  })
})
