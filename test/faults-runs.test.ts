/**
 * A run's writes under lost database connections (docs/api/runs.md, "Interrupted runs";
 * docs/operations.md, "Database deadlines"): the statements that store a run (its launch, its
 * event batches, its settle) fail as a statement does whose connection PostgreSQL ended, before
 * their commit or after it (the commit landed, its answer did not), and the run still ends
 * stored once: the answer 200, its log without a gap, one user and one assistant message. A
 * failure that is not a lost connection ends the run `not_stored`, answered 503 with
 * Retry-After, never 502. The errors are those `pg` throws (a server ErrorResponse with
 * SQLSTATE 57P01), injected at the driver (test/helpers/faults.ts), in either mode of the suite.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { driverError, loseConnection } from './helpers/faults.ts'
import { readSse } from './helpers/sse.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

describe('a run whose statements lose their connection', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: TestUser
  let agentUuid: string

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url })
    alice = await t.make.user({ name: 'Alice Faults' })
    agentUuid = (await t.as(alice).agents.create({ name: 'Steady', instruction: 'Answer.' } as never)).data.uuid
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  const run = (input: string) => t.http('POST', `/api/v1/agents/${agentUuid}/run`, { token: alice.token, body: { input } })

  /** The run's stored state: its status, the roles of its messages, and whether its log is 1..events_count. */
  const stored = async (runUuid: string) => {
    const [row] = await t.sql(
      `select r.status, r.events_count, (select array_agg(seq order by seq) from run_events e where e.run_id = r.id) as seqs,
         (select array_agg(m.role order by m.id) from messages m where m.run_id = r.id) as roles
       from runs r where r.uuid = ?`,
      [runUuid],
    )
    const seqs = (row.seqs as number[]).map(Number)
    return { status: row.status, roles: row.roles, gapless: seqs.every((seq, index) => seq === index + 1) && seqs.length === Number(row.events_count) }
  }

  it.each(['before', 'after'] as const)('stores every event once when event batches lose their connection %s their commit', async (when) => {
    // Slow chunks, so the deltas go out in batches of their own while the answer streams.
    upstream.enqueue({ kind: 'slow', delayMs: 50 })
    const fault = await loseConnection(t.runtime.orm, { statement: /insert into run_events/, times: 2, when })
    const res = await run(`Batches ${when}`)
    fault.restore()
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(fault.hits()).toBe(2)
    expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: `Echo: Batches ${when}` })
    expect(await stored(res.body.data.run.uuid)).toEqual({ status: 'succeeded', roles: ['user', 'assistant'], gapless: true })
    const events = await readSse(`${t.url}/api/v1/runs/${res.body.data.run.uuid}/events`, { authorization: `Bearer ${alice.token}` })
    expect(events.events.map((e) => Number(e.id))).toEqual(events.events.map((_, index) => index + 1))
  })

  it('settles once when the settle commits but its answer is lost: one assistant message, the run read back', async () => {
    const fault = await loseConnection(t.runtime.orm, { statement: /with settled as/, when: 'after' })
    const res = await run('Settle after')
    fault.restore()
    expect(fault.hits()).toBe(1)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.run).toMatchObject({ status: 'succeeded', output: 'Echo: Settle after' })
    expect(res.body.data.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'assistant'])
    expect(await stored(res.body.data.run.uuid)).toEqual({ status: 'succeeded', roles: ['user', 'assistant'], gapless: true })
  })

  it('settles on a new connection when the settle loses its connection before its commit', async () => {
    const fault = await loseConnection(t.runtime.orm, { statement: /with settled as/, times: 2 })
    const res = await run('Settle before')
    fault.restore()
    expect(fault.hits()).toBe(2)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(await stored(res.body.data.run.uuid)).toEqual({ status: 'succeeded', roles: ['user', 'assistant'], gapless: true })
  })

  it('launches once when the launch commits but its answer is lost: one run, one thread, one user message', async () => {
    const before = Number((await t.sql(`select count(*)::int as n from runs r join agents a on a.id = r.agent_id where a.uuid = ?`, [agentUuid]))[0].n)
    const fault = await loseConnection(t.runtime.orm, { statement: /with new_thread as/, when: 'after' })
    const res = await run('Launch after')
    fault.restore()
    expect(fault.hits()).toBe(1)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['user', 'Launch after'],
      ['assistant', 'Echo: Launch after'],
    ])
    const after = Number((await t.sql(`select count(*)::int as n from runs r join agents a on a.id = r.agent_id where a.uuid = ?`, [agentUuid]))[0].n)
    expect(after - before).toBe(1)
    expect(await stored(res.body.data.run.uuid)).toEqual({ status: 'succeeded', roles: ['user', 'assistant'], gapless: true })
  })

  it('answers 503 with Retry-After, never 502, for an answer the service could not store; the run ends not_stored with its final event', async () => {
    // Not a lost connection (disk full): not retried, so the answer is not stored.
    const fault = await loseConnection(t.runtime.orm, { statement: /with settled as/, error: () => driverError('53100', 'could not extend file: No space left on device') })
    const res = await run('No room')
    fault.restore()
    expect(res.status, JSON.stringify(res.body)).toBe(503)
    expect(res.headers.get('retry-after')).toBe('1')
    expect(res.body.message).toMatch(/^Run [0-9a-f-]{36} failed: The answer could not be stored$/)
    expect(JSON.stringify(res.body)).not.toMatch(/No space|could not extend/)
    const runUuid = /Run ([0-9a-f-]{36})/.exec(res.body.message)![1]
    const read = await t.http('GET', `/api/v1/runs/${runUuid}`, { token: alice.token })
    expect(read.body.data.run).toMatchObject({ status: 'failed', error: { code: 'not_stored', message: 'The answer could not be stored' } })
    expect(await stored(runUuid)).toEqual({ status: 'failed', roles: ['user'], gapless: true })
  })
})
