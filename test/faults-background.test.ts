/**
 * Background work on a database whose connections are lost (docs/operations.md, "Database
 * deadlines"), in either storage mode: the loss is injected at the driver (test/helpers/faults.ts:
 * a statement or a commit fails with SQLSTATE 57P01 before it ran, or after it ran and committed),
 * and on PostgreSQL a transaction's backend is also really ended (`pg_terminate_backend`).
 *
 * - A `set` node's static data counter advances exactly once whether the commit's answer is lost
 *   after the commit, the connection drops before it, or the write itself loses it.
 * - An execution insert whose answer is lost answers the execution it stored, once: no second row,
 *   `trigger_count` + 1, and it runs once (webhooks and background runs).
 * - A webhook whose job could not be sent answers 202 and its execution runs once: the job is sent
 *   again in the background, or by the sweep.
 * - A command room firing whose claim (which links what it starts) or outcome write loses its
 *   connection is claimed once, linked and settled; one whose database went away before it started anything is fired again;
 *   one that started nothing long after its claim is fired again by the sweep, or fails
 *   `interrupted` past its window; one whose execution goes on waits for it. A firing's error never
 *   carries the driver's text.
 */
import pg from 'pg'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { DATABASE_UNAVAILABLE, INTERNAL_FAILURE, INTERRUPTED } from '../src/command-room/engine.ts'
import { changeStaticData } from '../src/workflows/static-data.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { driverError, loseConnection, terminated, TERMINATED, type Fault } from './helpers/faults.ts'
import { until } from './helpers/processes.ts'

const TASKS = '/api/v1/command-room/tasks'
const bump = '=$exists($static.counter) ? $static.counter + 1 : 1'
/** pg-boss's statement that inserts jobs (the send of an execution's job). */
const JOB_INSERT = /INSERT INTO pgboss\.[^\s(]+ \(\s*id,\s*name,\s*data/i

describe('background work on a database that loses its connections', () => {
  let t: TestApp
  let alice: TestUser

  beforeAll(async () => {
    t = await createTestApp({ WORKFLOW_HEARTBEAT_MS: '200' })
    alice = await t.make.user({ name: 'Alice Faults' })
  })
  afterAll(async () => t?.close())
  afterEach(() => vi.restoreAllMocks())

  const edges = (...ids: string[]) => ids.slice(1).map((target, i) => ({ id: `e${i}`, source: ids[i], target }))
  const createWorkflow = async (body: Record<string, unknown>) => {
    const res = await t.http('POST', '/api/v1/workflows', { token: alice.token, body: { name: 'Faulty', ...body } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const [row] = await t.sql('select id::float8 as id from workflows where uuid = ?', [res.body.data.uuid])
    return { uuid: String(res.body.data.uuid), id: Number(row.id), webhookUrl: res.body.data.webhook_url as string | null }
  }
  const counterFlow = (trigger: 'manual_trigger' | 'webhook_trigger') =>
    createWorkflow({
      is_active: true,
      nodes: [
        { id: 'start', type: trigger, parameters: {} },
        { id: 'bump', type: 'set', parameters: { values: { counter: bump }, static_data: { counter: bump } } },
      ],
      edges: edges('start', 'bump'),
    })
  const workflowRow = async (id: number) =>
    (await t.sql('select static_data, trigger_count from workflows where id = ?', [id]))[0] as {
      static_data: Record<string, unknown>
      trigger_count: number
    }
  const executionsOf = (id: number) =>
    t.sql('select uuid, status from workflow_executions where workflow_id = ? order by id', [id]) as Promise<
      { uuid: string; status: string }[]
    >
  const ended = (rows: { status: string }[]) => rows.length > 0 && rows.every((row) => !['queued', 'running'].includes(row.status))

  describe("a set node's static data counter", () => {
    const cases: [string, Fault][] = [
      ['the commit lands and its answer is lost', { statement: /for no key update/i, at: 'commit', when: 'after' }],
      ['the connection drops before the commit', { statement: /for no key update/i, at: 'commit', when: 'before' }],
      ['the write loses its connection', { statement: /^update "workflows" set "static_data"/, when: 'before' }],
      [
        'the write lands and its answer is lost (the transaction is rolled back)',
        { statement: /^update "workflows" set "static_data"/, when: 'after' },
      ],
    ]
    it.each(cases)('advances exactly once when %s', async (_, fault) => {
      const flow = await counterFlow('manual_trigger')
      const armed = await loseConnection(t.runtime.orm, fault)
      const res = await t.http('POST', `/api/v1/workflows/${flow.uuid}/run`, { token: alice.token, body: {} })
      armed.restore()
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(armed.hits()).toBe(1)
      expect(res.body.data).toMatchObject({ status: 'succeeded', output: { counter: 1 } })
      expect((await workflowRow(flow.id)).static_data).toEqual({ counter: 1 })
      const again = await t.http('POST', `/api/v1/workflows/${flow.uuid}/run`, { token: alice.token, body: {} })
      expect(again.body.data.output).toEqual({ counter: 2 })
      expect((await workflowRow(flow.id)).static_data).toEqual({ counter: 2 })
    })

    it.runIf(Boolean(process.env.DATABASE_URL))(
      "advances exactly once when PostgreSQL really ends the change's backend in the middle of its transaction",
      async () => {
        const flow = await counterFlow('manual_trigger')
        const admin = new pg.Client({ connectionString: t.config.databaseUrl })
        await admin.connect()
        try {
          let runs = 0
          const changed = await changeStaticData(t.runtime.orm, t.runtime.log, flow.id, async (data) => {
            runs++
            // The first time, the transaction (holding the row lock, idle while the node
            // evaluates) loses its backend: it is rolled back and the whole change runs again.
            if (runs === 1) {
              const ended = await admin.query<{ ended: boolean }>(
                `select pg_terminate_backend(pid) as ended from pg_stat_activity
                 where datname = current_database() and state = 'idle in transaction' and query ilike '%for no key update%'`,
              )
              expect(ended.rows).toEqual([{ ended: true }])
            }
            data.counter = (typeof data.counter === 'number' ? data.counter : 0) + 1
            return data.counter
          })
          expect(runs).toBe(2)
          expect(changed).toMatchObject({ value: 1, changed: true, staticData: { counter: 1 } })
          expect((await workflowRow(flow.id)).static_data).toEqual({ counter: 1 })
        } finally {
          await admin.end()
        }
      },
    )
  })

  describe('an execution insert whose answer is lost', () => {
    const insert = /insert into workflow_executions/i
    it.each([
      ['after it committed', 'after'],
      ['before it ran', 'before'],
    ] as const)('answers a webhook 202 with the one execution it stored %s, counted once, run once', async (_, when) => {
      const flow = await counterFlow('webhook_trigger')
      const armed = await loseConnection(t.runtime.orm, { statement: insert, when })
      const res = await fetch(flow.webhookUrl!.replace(t.config.appUrl, t.url), {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      })
      armed.restore()
      const body = (await res.json()) as { data: { execution_uuid: string; status: string } }
      expect(res.status, JSON.stringify(body)).toBe(202)
      expect(armed.hits()).toBe(1)
      const rows = await until(() => executionsOf(flow.id), ended, 10_000)
      expect(rows).toEqual([{ uuid: body.data.execution_uuid, status: 'succeeded' }])
      expect(await workflowRow(flow.id)).toEqual({ static_data: { counter: 1 }, trigger_count: 1 })
    })

    it('answers a background run 202 with the one execution it stored after the commit', async () => {
      const flow = await counterFlow('manual_trigger')
      const armed = await loseConnection(t.runtime.orm, { statement: insert, when: 'after' })
      const res = await t.http('POST', `/api/v1/workflows/${flow.uuid}/run`, { token: alice.token, body: { background: true } })
      armed.restore()
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      const rows = await until(() => executionsOf(flow.id), ended, 10_000)
      expect(rows).toEqual([{ uuid: res.body.data.uuid, status: 'succeeded' }])
      expect(await workflowRow(flow.id)).toEqual({ static_data: { counter: 1 }, trigger_count: 1 })
    })
  })

  describe('a webhook whose job cannot be sent', () => {
    /** Fails the next `times` job inserts of pg-boss with `error`. */
    const failJobSends = async (times: number, error: () => Error) => {
      const boss = await t.runtime.jobs.start()
      const db = boss.getDb()
      const executeSql = db.executeSql.bind(db)
      let left = times
      vi.spyOn(db, 'executeSql').mockImplementation(async (text: string, values?: unknown[]) => {
        if (left > 0 && JOB_INSERT.test(text)) {
          left--
          throw error()
        }
        return executeSql(text, values)
      })
      return () => left
    }
    const call = async (url: string) => {
      const res = await fetch(url.replace(t.config.appUrl, t.url), {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      })
      return { status: res.status, body: (await res.json()) as { data: { execution_uuid: string; status: string } } }
    }

    it('answers 202, and the job is sent again in the background: the execution runs once', async () => {
      const flow = await counterFlow('webhook_trigger')
      const left = await failJobSends(3, terminated)
      const res = await call(flow.webhookUrl!)
      expect(res).toMatchObject({ status: 202, body: { data: { status: 'queued' } } })
      const rows = await until(() => executionsOf(flow.id), ended, 10_000)
      expect(left()).toBe(0)
      expect(rows).toEqual([{ uuid: res.body.data.execution_uuid, status: 'succeeded' }])
      expect(await workflowRow(flow.id)).toEqual({ static_data: { counter: 1 }, trigger_count: 1 })
    })

    it('answers 202 when the queue refuses the job, and the sweep relays it: the execution runs once', async () => {
      const flow = await counterFlow('webhook_trigger')
      // Not a lost connection: nothing sends it again but the sweep.
      const left = await failJobSends(2, () => new Error('The queue refused the job'))
      const res = await call(flow.webhookUrl!)
      expect(res).toMatchObject({ status: 202, body: { data: { status: 'queued' } } })
      await until(
        async () => left(),
        (n) => n === 0,
        5_000,
      )
      expect(await executionsOf(flow.id)).toEqual([{ uuid: res.body.data.execution_uuid, status: 'queued' }])
      // As if it had waited out the sweep's delay.
      await t.sql(`update workflow_executions set heartbeat_at = now() - interval '1 minute' where uuid = ?`, [
        res.body.data.execution_uuid,
      ])
      await t.runtime.workflows.sweep()
      const rows = await until(() => executionsOf(flow.id), ended, 10_000)
      expect(rows).toEqual([{ uuid: res.body.data.execution_uuid, status: 'succeeded' }])
      expect(await workflowRow(flow.id)).toEqual({ static_data: { counter: 1 }, trigger_count: 1 })
    })
  })

  describe('command room firings', () => {
    let workflow: { uuid: string; id: number }
    let workflowTask: string
    let agentUuid: string
    let agentTask: string
    /** The claim of a batch of firings (src/command-room/engine.ts). */
    const CLAIM = /claimed as \(\s*update command_room_task_firings/
    /** The claim, which links what the firing starts, after it committed, and the outcome, before it ran. */
    const linkAndSettle: Fault[] = [
      { statement: CLAIM, when: 'after' },
      { statement: /ended as \(\s*update command_room_task_firings/, when: 'before' },
    ]
    /** The read of the workflow a workflow firing runs, before it started anything. */
    const workflowRead = /as "pinData" from workflows w where w\.id =/

    beforeAll(async () => {
      workflow = await createWorkflow({
        nodes: [
          { id: 'start', type: 'manual_trigger', parameters: {} },
          { id: 'shape', type: 'set', parameters: { values: { greeting: 'hello' } } },
        ],
        edges: edges('start', 'shape'),
      })
      // Paused: only "run now" and the firings written here fire.
      const store = async (body: Record<string, unknown>) => {
        const res = await t.http('POST', TASKS, {
          token: alice.token,
          body: { name: 'Faulty task', schedule: 'hourly', is_active: false, ...body },
        })
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        return String(res.body.data.uuid)
      }
      workflowTask = await store({ workflow_uuid: workflow.uuid })
      const agent = await t.http('POST', '/api/v1/agents', {
        token: alice.token,
        body: { name: 'Local', instruction: 'Answer.', metadata: { large_language_model: 'local-test-model' } },
      })
      expect(agent.status, JSON.stringify(agent.body)).toBe(201)
      agentUuid = String(agent.body.data.uuid)
      agentTask = await store({ agent_uuid: agentUuid, input: 'hello' })
    })

    type Firing = { uuid: string; status: string; error: string | null; run_uuid: string | null; execution_uuid: string | null }
    const firing = async (task: string, uuid: string): Promise<Firing> => {
      const res = await t.http('GET', `${TASKS}/${task}/firings?per_page=100`, { token: alice.token })
      return (res.body.data as Firing[]).find((f) => f.uuid === uuid)!
    }
    const runNow = async (task: string): Promise<string> => {
      const res = await t.http('POST', `${TASKS}/${task}/run`, { token: alice.token })
      expect(res.status, JSON.stringify(res.body)).toBe(202)
      return String(res.body.data.uuid)
    }
    const settled = (f: Firing) => !['queued', 'running'].includes(f.status)
    const taskId = async (task: string) =>
      Number((await t.sql('select id::float8 as id from command_room_tasks where uuid = ?', [task]))[0].id)
    const executionStatus = async (uuid: string | null) =>
      uuid ? ((await t.sql('select status from workflow_executions where uuid = ?', [uuid]))[0]?.status ?? 'missing') : null
    /** A firing of `task` written as the sweep would find it; answers its uuid. */
    // due_at is stored to the millisecond and (task, due_at) is unique: two rows written within one
    // millisecond (PGlite is that fast) would collide, so each row is a millisecond further on.
    let written = 0
    const writeFiring = async (task: string, o: { status: string; firedAgo: string; updatedAgo: string; executionUuid?: string }) => {
      written += 1
      const [row] = await t.sql(
        `insert into command_room_task_firings (uuid, task_id, due_at, status, manual, fired_at, execution_uuid, created_at, updated_at)
         values (gen_random_uuid(), ?, clock_timestamp() + ? * interval '1 millisecond', ?, true, now() - ?::interval, ?, now() - ?::interval, now() - ?::interval)
         returning uuid`,
        [await taskId(task), written, o.status, o.firedAgo, o.executionUuid ?? null, o.firedAgo, o.updatedAgo],
      )
      return String(row.uuid)
    }

    it('a workflow firing whose claim (its link) loses its answer and whose outcome loses its connection is linked and settled', async () => {
      const before = (await executionsOf(workflow.id)).length
      const armed = await loseConnection(t.runtime.orm, ...linkAndSettle)
      const uuid = await runNow(workflowTask)
      const done = await until(() => firing(workflowTask, uuid), settled, 15_000)
      armed.restore()
      expect(armed.hits()).toBe(2)
      const executions = await executionsOf(workflow.id)
      expect(executions).toHaveLength(before + 1)
      expect(done).toMatchObject({ status: 'succeeded', error: null, execution_uuid: executions.at(-1)!.uuid })
      expect(await executionStatus(done.execution_uuid)).toBe('succeeded')
    })

    it('an agent firing whose claim (its links) loses its answer and whose outcome loses its connection is linked and settled', async () => {
      const armed = await loseConnection(t.runtime.orm, ...linkAndSettle)
      const uuid = await runNow(agentTask)
      const done = await until(() => firing(agentTask, uuid), settled, 15_000)
      armed.restore()
      expect(armed.hits()).toBe(2)
      expect(done).toMatchObject({ status: 'succeeded', error: null })
      const [run] = await t.sql('select status from runs where uuid = ?', [done.run_uuid])
      expect(run).toEqual({ status: 'succeeded' })
    })

    it('a firing whose claim commits and loses its answer is claimed once and runs', async () => {
      const before = (await executionsOf(workflow.id)).length
      // The claim is one statement outside a transaction: it commits as it runs.
      const armed = await loseConnection(t.runtime.orm, { statement: CLAIM, when: 'after' })
      const uuid = await runNow(workflowTask)
      const done = await until(() => firing(workflowTask, uuid), settled, 15_000)
      armed.restore()
      expect(armed.hits()).toBe(1)
      expect(done).toMatchObject({ status: 'succeeded', error: null })
      expect(await executionsOf(workflow.id)).toHaveLength(before + 1)
    })

    it('due firings whose transaction commits and loses its answer are sent at once and fire once', async () => {
      const res = await t.http('POST', TASKS, {
        token: alice.token,
        body: { name: 'Due soon', workflow_uuid: workflow.uuid, schedule: 'once', run_at: new Date(Date.now() + 60_000).toISOString() },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      const task = String(res.body.data.uuid)
      const armed = await loseConnection(t.runtime.orm, {
        statement: /^insert into "command_room_task_firings"/,
        at: 'commit',
        when: 'after',
      })
      // Taken before its due time comes (the scheduler of this process finds nothing left then).
      expect(await t.runtime.commandRoom.fireDue(new Date(Date.now() + 120_000))).toBe(1)
      armed.restore()
      expect(armed.hits()).toBe(1)
      const list = async () => (await t.http('GET', `${TASKS}/${task}/firings`, { token: alice.token })).body.data as Firing[]
      // Well within the sweep's 15 s for a firing whose job was not sent.
      const [done] = await until(list, (firings) => firings.length === 1 && settled(firings[0]), 5_000)
      expect(done).toMatchObject({ status: 'succeeded', error: null })
    })

    it('a firing whose database goes away before it started anything is fired again, not failed, and never shows the driver text', async () => {
      const before = (await executionsOf(workflow.id)).length
      const armed = await loseConnection(t.runtime.orm, { statement: workflowRead })
      const uuid = await runNow(workflowTask)
      const requeued = await until(
        () => firing(workflowTask, uuid),
        (f) => armed.hits() === 1 && f.status === 'queued',
        10_000,
      )
      armed.restore()
      expect(requeued).toMatchObject({ error: null, execution_uuid: null })
      // As if it had waited out the sweep's delay for a firing not sent (its first job may still be ending).
      const done = await until(
        async () => {
          await t.sql(
            `update command_room_task_firings set updated_at = now() - interval '1 minute' where uuid = ? and status = 'queued'`,
            [uuid],
          )
          await t.runtime.commandRoom.sweep()
          return firing(workflowTask, uuid)
        },
        settled,
        15_000,
      )
      expect(done).toMatchObject({ status: 'succeeded', error: null })
      expect(await executionsOf(workflow.id)).toHaveLength(before + 1)
      expect(await executionStatus(done.execution_uuid)).toBe('succeeded')
    })

    it('a firing whose database stays away past its window fails with a plain sentence; a fault of ours with a generic one', async () => {
      const cases: [Fault, string][] = [
        [{ statement: workflowRead }, DATABASE_UNAVAILABLE],
        [{ statement: workflowRead, error: () => driverError('57014', 'canceling statement due to statement timeout') }, INTERNAL_FAILURE],
      ]
      for (const [fault, message] of cases) {
        const uuid = await writeFiring(workflowTask, { status: 'queued', firedAgo: '1 hour', updatedAgo: '0 seconds' })
        const armed = await loseConnection(t.runtime.orm, fault)
        await t.runtime.commandRoom.fire(uuid)
        armed.restore()
        expect(armed.hits()).toBe(1)
        const done = await firing(workflowTask, uuid)
        expect(done).toMatchObject({ status: 'failed', error: message, execution_uuid: null })
        expect(done.error).not.toContain(TERMINATED)
        expect(done.error).not.toContain('canceling')
      }
      const [task] = await t.sql('select last_status from command_room_tasks where uuid = ?', [workflowTask])
      expect(task).toEqual({ last_status: 'failed' })
    })

    it('the sweep fires again a firing that started nothing, fails one past its window, and waits for an execution that goes on', async () => {
      const before = (await executionsOf(workflow.id)).length
      const nothing = await writeFiring(workflowTask, { status: 'running', firedAgo: '3 minutes', updatedAgo: '3 minutes' })
      const unstored = await writeFiring(workflowTask, {
        status: 'running',
        firedAgo: '3 minutes',
        updatedAgo: '3 minutes',
        executionUuid: '0190a000-0000-7000-8000-000000000001',
      })
      const late = await writeFiring(workflowTask, { status: 'running', firedAgo: '1 hour', updatedAgo: '3 minutes' })
      // An execution running elsewhere (its heartbeat fresh for a day).
      const [goingOn] = await t.sql(
        `insert into workflow_executions (uuid, workflow_id, workspace_id, user_id, status, mode, input, started_at, heartbeat_at, attempts, created_at, updated_at)
         select gen_random_uuid(), w.id, w.workspace_id, w.user_id, 'running', 'schedule', '{}'::jsonb, now(), now() + interval '1 day', 1, now(), now()
         from workflows w where w.id = ? returning uuid`,
        [workflow.id],
      )
      const waiting = await writeFiring(workflowTask, {
        status: 'running',
        firedAgo: '3 minutes',
        updatedAgo: '3 minutes',
        executionUuid: String(goingOn.uuid),
      })

      // This process's own sweep may come first: what counts is what became of them.
      await t.runtime.commandRoom.sweep()
      expect(await firing(workflowTask, late)).toMatchObject({ status: 'failed', error: INTERRUPTED })
      for (const uuid of [nothing, unstored]) {
        const done = await until(() => firing(workflowTask, uuid), settled, 15_000)
        expect(done).toMatchObject({ status: 'succeeded', error: null })
        expect(await executionStatus(done.execution_uuid)).toBe('succeeded')
      }
      expect(await executionsOf(workflow.id)).toHaveLength(before + 3)
      expect(await firing(workflowTask, waiting)).toMatchObject({ status: 'running', execution_uuid: goingOn.uuid })

      // Its execution ends: the firing takes its outcome.
      await t.sql(`update workflow_executions set status = 'failed', error = 'The node failed', finished_at = now() where uuid = ?`, [
        goingOn.uuid,
      ])
      await t.runtime.commandRoom.sweep()
      expect(await firing(workflowTask, waiting)).toMatchObject({
        status: 'failed',
        error: 'The node failed',
        execution_uuid: goingOn.uuid,
      })
    })
  })
})
