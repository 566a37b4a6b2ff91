/**
 * Outbound webhooks (docs/api/webhooks.md; routers/webhooks.router.ts, src/webhooks/): the
 * endpoints' CRUD with every validation rule, role and tenancy check; events recorded by the
 * change's transaction (never for one that rolled back) and delivered once per endpoint to a real
 * receiver on loopback, signed so that the `standardwebhooks` package verifies them (both secrets
 * after a rotation); retries with the same `webhook-id`, `410 Gone`, disabling after a long
 * failure, receivers that hang, answer 3 MB or close the connection, a lost lease, ping and
 * redeliver.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'
import { startReceiver, type Receiver } from './helpers/webhook-receiver.ts'
import { expectErrorBody, hiddenCheck, ISO, UUID } from './helpers/expect.ts'
import { expectNamed, readOnlyToken } from './helpers/agents.ts'

const ENDPOINT_KEYS = ['created_at', 'description', 'disabled_reason', 'event_types', 'is_active', 'updated_at', 'url', 'uuid']
const DELIVERY_KEYS = ['attempts', 'created_at', 'endpoint_uuid', 'event_id', 'event_type', 'next_attempt_at', 'payload', 'status', 'uuid']
const expectHidden = hiddenCheck('Webhook endpoint')

/** Waits until `check` answers something truthy (polling every 50 ms), or fails after `ms`. */
async function until<T>(check: () => Promise<T | undefined | null | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await check()
    if (value) return value
    if (Date.now() > deadline) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The verified payload of a received request, with the `standardwebhooks` package. */
const verify = (secret: string, received: { headers: Record<string, string>; body: string }) =>
  new Webhook(secret).verify(received.body, received.headers) as {
    id: string
    type: string
    timestamp: string
    workspace_uuid: string
    data: Record<string, any>
  }

describe('outbound webhooks', () => {
  let t: TestApp
  let guarded: TestApp
  let upstream: Upstream
  let receiver: Receiver
  let owner: TestUser

  beforeAll(async () => {
    upstream = await startUpstream()
    receiver = await startReceiver()
    t = await createTestApp({
      OPENAI_API_KEY: 'sk-upstream-test',
      OPENAI_BASE_URL: upstream.url,
      TOOL_ALLOW_PRIVATE_NETWORK: 'true',
      WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true',
      WEBHOOK_RETRY_DELAYS: '1,1',
      WEBHOOK_TIMEOUT_MS: '1500',
    })
    // The outbound guard on: loopback endpoints are refused.
    guarded = await createTestApp({ WORKER: 'false' })
    owner = await t.make.user()
  })
  afterAll(async () => {
    await t?.close()
    await guarded?.close()
    await receiver?.close()
    await upstream?.close()
  })
  beforeEach(() => {
    receiver.received.length = 0
    receiver.fallback = { status: 200 }
  })

  /** An endpoint of `user`'s workspace for the receiver, with its secret. */
  const makeEndpoint = async (user: { token: string }, body: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const res = await t.http('POST', '/api/v1/webhook-endpoints', {
      token: user.token,
      headers,
      body: { url: receiver.url, event_types: ['*'], ...body },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string; secret: string; url: string }
  }
  const deliveriesOf = async (user: { token: string }, endpoint: string, query = '') =>
    (await t.http('GET', `/api/v1/webhook-endpoints/${endpoint}/deliveries${query}`, { token: user.token })).body
  const removeEndpoint = (user: { token: string }, uuid: string) =>
    t.http('DELETE', `/api/v1/webhook-endpoints/${uuid}`, { token: user.token })

  describe('endpoints', () => {
    it('creates with a secret shown once, lists, retrieves, changes and deletes', async () => {
      const created = await t.http('POST', '/api/v1/webhook-endpoints', {
        token: owner.token,
        body: { url: receiver.url, description: 'CI', event_types: ['run.succeeded', 'run.failed'] },
      })
      expect(created.status).toBe(201)
      const endpoint = created.body.data
      expect(Object.keys(endpoint).sort()).toEqual([...ENDPOINT_KEYS, 'secret'].sort())
      expect(endpoint).toMatchObject({
        uuid: expect.stringMatching(UUID),
        url: receiver.url,
        description: 'CI',
        is_active: true,
        disabled_reason: null,
      })
      expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
      expect(Buffer.from(endpoint.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24)
      expect(endpoint.created_at).toMatch(ISO)

      const read = await t.http('GET', `/api/v1/webhook-endpoints/${endpoint.uuid}`, { token: owner.token })
      expect(read.status).toBe(200)
      expect(Object.keys(read.body.data).sort()).toEqual(ENDPOINT_KEYS)
      expect(JSON.stringify(read.body)).not.toContain(endpoint.secret.slice(6))
      const [stored] = await t.sql('select secret_ciphertext from webhook_endpoints where uuid = ?', [endpoint.uuid])
      expect(String(stored.secret_ciphertext)).not.toContain(endpoint.secret.slice(6))

      const list = await t.http('GET', '/api/v1/webhook-endpoints', { token: owner.token })
      expect(list.status).toBe(200)
      expect(list.body.data.map((item: { uuid: string }) => item.uuid)).toContain(endpoint.uuid)
      expect(list.body.meta).toMatchObject({ current_page: 1, per_page: 15 })

      const changed = await t.http('PUT', `/api/v1/webhook-endpoints/${endpoint.uuid}`, {
        token: owner.token,
        body: { description: null, event_types: ['*'], is_active: false },
      })
      expect(changed.status).toBe(200)
      expect(changed.body.data).toMatchObject({ description: null, event_types: ['*'], is_active: false, url: receiver.url })

      expect((await removeEndpoint(owner, endpoint.uuid)).status).toBe(204)
      expect((await t.http('GET', `/api/v1/webhook-endpoints/${endpoint.uuid}`, { token: owner.token })).status).toBe(404)
    })

    it('refuses a bad url, an unknown event type and unknown fields, naming the field', async () => {
      const post = (body: Record<string, unknown>) => t.http('POST', '/api/v1/webhook-endpoints', { token: owner.token, body })
      expectNamed(await post({ url: 'ftp://example.com/x', event_types: ['*'] }), 'url')
      expectNamed(await post({ url: 'not a url', event_types: ['*'] }), 'url')
      expectNamed(await post({ url: '', event_types: ['*'] }), 'url')
      expectNamed(await post({ url: receiver.url, event_types: ['run.succeeded', 'run.exploded'] }), 'event_types.1')
      expectNamed(await post({ url: receiver.url, event_types: [] }), 'event_types')
      expectNamed(await post({ url: receiver.url, event_types: ['*'], is_active: 'yes' }), 'is_active')
      expectNamed(await post({ url: receiver.url, event_types: ['*'], color: 'red' }), 'color')
      const endpoint = await makeEndpoint(owner)
      expectNamed(
        await t.http('PUT', `/api/v1/webhook-endpoints/${endpoint.uuid}`, { token: owner.token, body: { url: 'mailto:x@example.com' } }),
        'url',
      )
      expectNamed(
        await t.http('GET', `/api/v1/webhook-endpoints/${endpoint.uuid}/deliveries?status=lost`, { token: owner.token }),
        'status',
      )
      expectNamed(
        await t.http('GET', `/api/v1/webhook-endpoints/${endpoint.uuid}/deliveries?event_type=run.exploded`, { token: owner.token }),
        'event_type',
      )
      await removeEndpoint(owner, endpoint.uuid)
    })

    it('refuses loopback and private addresses unless WEBHOOK_ALLOW_PRIVATE_NETWORK is on', async () => {
      const user = await guarded.make.user()
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://localhost/x',
        'http://10.1.2.3/x',
        'http://[::1]/x',
        'http://169.254.169.254/latest',
      ]) {
        const res = await guarded.http('POST', '/api/v1/webhook-endpoints', { token: user.token, body: { url, event_types: ['*'] } })
        expectNamed(res, 'url')
        expect(res.body.issues[0].message).toContain('WEBHOOK_ALLOW_PRIVATE_NETWORK')
      }
      const ok = await guarded.http('POST', '/api/v1/webhook-endpoints', {
        token: user.token,
        body: { url: 'https://93.184.215.14/hooks', event_types: ['*'] },
      })
      expect(ok.status).toBe(201)
    })

    it('answers 401 without a token, 403 to members and read-only tokens, 404 across workspaces', async () => {
      const endpoint = await makeEndpoint(owner)
      expectErrorBody(await t.http('GET', '/api/v1/webhook-endpoints'), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`), 401, 'UNAUTHORIZED')

      const member = await t.make.user()
      await t.make.member(owner.workspaceUuid, owner, member, 'member')
      const inOwners = { 'x-workspace-uuid': owner.workspaceUuid }
      for (const [method, path] of [
        ['GET', '/api/v1/webhook-endpoints'],
        ['GET', `/api/v1/webhook-endpoints/${endpoint.uuid}`],
        ['POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`],
        ['GET', `/api/v1/webhook-endpoints/${endpoint.uuid}/deliveries`],
      ] as const) {
        expectErrorBody(await t.http(method, path, { token: member.token, headers: inOwners }), 403, 'FORBIDDEN')
      }
      const memberCreate = await t.http('POST', '/api/v1/webhook-endpoints', {
        token: member.token,
        headers: inOwners,
        body: { url: receiver.url, event_types: ['*'] },
      })
      expectErrorBody(memberCreate, 403, 'FORBIDDEN')

      const readOnly = await readOnlyToken(t, owner)
      expectErrorBody(
        await t.http('PUT', `/api/v1/webhook-endpoints/${endpoint.uuid}`, { token: readOnly.token, body: { is_active: false } }),
        403,
        'FORBIDDEN',
      )
      expectErrorBody(
        await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/rotate-secret`, { token: readOnly.token }),
        403,
        'FORBIDDEN',
      )
      expect((await t.http('GET', `/api/v1/webhook-endpoints/${endpoint.uuid}`, { token: readOnly.token })).status).toBe(200)

      const stranger = await t.make.user()
      for (const [method, path] of [
        ['GET', `/api/v1/webhook-endpoints/${endpoint.uuid}`],
        ['PUT', `/api/v1/webhook-endpoints/${endpoint.uuid}`],
        ['DELETE', `/api/v1/webhook-endpoints/${endpoint.uuid}`],
        ['POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/rotate-secret`],
        ['POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`],
        ['GET', `/api/v1/webhook-endpoints/${endpoint.uuid}/deliveries`],
      ] as const) {
        const res = await t.http(method, path, { token: stranger.token, ...(method === 'PUT' ? { body: { is_active: false } } : {}) })
        expectHidden(res, { uuid: endpoint.uuid, name: receiver.url })
      }
      const list = await t.http('GET', '/api/v1/webhook-endpoints', { token: stranger.token })
      expect(list.body.data).toEqual([])
      await removeEndpoint(owner, endpoint.uuid)
    })
  })

  describe('delivery', () => {
    it('pings whatever the event types and is_active, signed so that standardwebhooks verifies it', async () => {
      const endpoint = await makeEndpoint(owner, { event_types: ['run.failed'], is_active: false })
      const res = await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`, { token: owner.token })
      expect(res.status).toBe(202)
      expect(Object.keys(res.body.data).sort()).toEqual(DELIVERY_KEYS)
      expect(res.body.data).toMatchObject({ endpoint_uuid: endpoint.uuid, event_type: 'webhook_endpoint.ping', status: 'pending' })
      const [got] = await receiver.waitFor(1)
      expect(got.headers['content-type']).toBe('application/json')
      expect(got.headers['webhook-id']).toBe(res.body.data.event_id)
      expect(Math.abs(Number(got.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30)
      const payload = verify(endpoint.secret, got)
      expect(payload).toMatchObject({
        id: res.body.data.event_id,
        type: 'webhook_endpoint.ping',
        workspace_uuid: owner.workspaceUuid,
        data: { uuid: endpoint.uuid },
      })
      expect(payload.timestamp).toMatch(ISO)
      // A wrong secret or a changed body does not verify.
      expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, got)).toThrow()
      expect(() => verify(endpoint.secret, { ...got, body: got.body.replace('ping', 'pong') })).toThrow()

      const done = await until(async () => {
        const read = await t.http('GET', `/api/v1/webhook-deliveries/${res.body.data.uuid}`, { token: owner.token })
        return read.body.data.status === 'succeeded' && read.body.data
      })
      expect(done.attempts).toEqual([
        {
          attempted_at: expect.stringMatching(ISO),
          status_code: 200,
          error: null,
          duration_ms: expect.any(Number),
          response_body: 'answered 200',
        },
      ])
      expect(done.next_attempt_at).toBeNull()
      expect(done.payload).toEqual(JSON.parse(got.body))
      await removeEndpoint(owner, endpoint.uuid)
    })

    it('delivers run.succeeded with the Run as data, and only to subscribed endpoints of the workspace', async () => {
      const all = await makeEndpoint(owner)
      const failedOnly = await makeEndpoint(owner, { url: `${receiver.url}?failed-only`, event_types: ['run.failed'] })
      const other = await t.make.user()
      const othersEndpoint = await makeEndpoint(other, { url: `${receiver.url}?other` })

      const agent = await t.http('POST', '/api/v1/agents', { token: owner.token, body: { name: 'Hooked', instruction: 'Answer briefly.' } })
      expect(agent.status).toBe(201)
      upstream.enqueue({ kind: 'text', text: 'Fine.' })
      const run = await t.http('POST', `/api/v1/agents/${agent.body.data.uuid}/run`, { token: owner.token, body: { input: 'Hello' } })
      expect(run.status).toBe(200)
      const runUuid = run.body.data.run.uuid

      const events = await until(async () => {
        const types = receiver.received.map((got) => verify(all.secret, got).type)
        return types.includes('run.succeeded') && types.includes('agent.version_created') && receiver.received
      })
      expect(events.every((got) => !got.headers['webhook-id'] || new URL(receiver.url).pathname === '/hooks')).toBe(true)
      const succeeded = events.map((got) => verify(all.secret, got)).find((payload) => payload.type === 'run.succeeded')!
      expect(succeeded.workspace_uuid).toBe(owner.workspaceUuid)
      const retrieved = await t.http('GET', `/api/v1/runs/${runUuid}`, { token: owner.token })
      expect(succeeded.data).toEqual(retrieved.body.data.run)
      const version = events.map((got) => verify(all.secret, got)).find((payload) => payload.type === 'agent.version_created')!
      expect(version.data).toMatchObject({ agent_uuid: agent.body.data.uuid, version: 1 })

      // Nothing for the endpoint subscribed to run.failed only, nor for another workspace's.
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect((await deliveriesOf(owner, failedOnly.uuid)).data).toEqual([])
      expect((await deliveriesOf(other, othersEndpoint.uuid)).data).toEqual([])
      const listed = await deliveriesOf(owner, all.uuid, '?event_type=run.succeeded')
      expect(listed.data).toHaveLength(1)
      expect(listed.data[0]).toMatchObject({ event_id: succeeded.id, status: 'succeeded' })
      for (const endpoint of [all, failedOnly]) await removeEndpoint(owner, endpoint.uuid)
      await removeEndpoint(other, othersEndpoint.uuid)
    })

    it('records no event for a change that rolled back, and one per change that committed', async () => {
      const endpoint = await makeEndpoint(owner, { event_types: ['run.failed'] })
      const [workspace] = await t.sql('select id from workspaces where uuid = ?', [owner.workspaceUuid])
      const insertRun = `insert into runs (uuid, kind, status, workspace_id, user_id, created_at, updated_at) values (gen_random_uuid(), 'agent', 'running', ?, ?, now(), now()) returning id`
      const [run] = await t.sql(insertRun, [workspace.id, owner.id])
      const before = await t.sql(`select count(*)::int as n from outbox_events where type = 'run.failed'`)
      await expect(
        t.runtime.orm.em.fork().transactional(async (em) => {
          await em.execute(`update runs set status = 'failed' where id = ?`, [run.id])
          throw new Error('roll back')
        }),
      ).rejects.toThrow('roll back')
      expect(await t.sql(`select count(*)::int as n from outbox_events where type = 'run.failed'`)).toEqual(before)
      await t.sql(`update runs set status = 'failed', finished_at = now() where id = ?`, [run.id])
      // A write that leaves the status as it is records nothing more.
      await t.sql(`update runs set status = 'failed', updated_at = now() where id = ?`, [run.id])
      await receiver.waitFor(1)
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(receiver.received).toHaveLength(1)
      expect(verify(endpoint.secret, receiver.received[0]).type).toBe('run.failed')
      await removeEndpoint(owner, endpoint.uuid)
    })

    it('retries a failed attempt with the same webhook-id and body until a 2xx', async () => {
      const endpoint = await makeEndpoint(owner)
      receiver.enqueue({ status: 503 })
      const ping = await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`, { token: owner.token })
      // A ping gets one attempt; an event gets the retry delays' (1 s, 1 s).
      const pinged = await until(async () => {
        const read = await t.http('GET', `/api/v1/webhook-deliveries/${ping.body.data.uuid}`, { token: owner.token })
        return read.body.data.status === 'failed' && read.body.data
      })
      expect(pinged.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([503])
      receiver.received.length = 0
      receiver.enqueue({ status: 500 })
      const [workspace] = await t.sql('select id from workspaces where uuid = ?', [owner.workspaceUuid])
      await t.sql(
        `insert into runs (uuid, kind, status, workspace_id, user_id, created_at, updated_at) values (gen_random_uuid(), 'agent', 'canceled', ?, ?, now(), now())`,
        [workspace.id, owner.id],
      )
      const got = await receiver.waitFor(2, 15_000)
      expect(got[1].headers['webhook-id']).toBe(got[0].headers['webhook-id'])
      expect(got[1].body).toBe(got[0].body)
      expect(got[1].at - got[0].at).toBeGreaterThanOrEqual(900)
      const [delivery] = (await deliveriesOf(owner, endpoint.uuid, '?event_type=run.canceled')).data
      const done = await until(async () => {
        const read = await t.http('GET', `/api/v1/webhook-deliveries/${delivery.uuid}`, { token: owner.token })
        return read.body.data.status === 'succeeded' && read.body.data
      })
      expect(done.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([500, 200])
      expect(done.attempts[0].error).toBe('The endpoint answered 500')

      // Redeliver: one more attempt, the same webhook-id.
      const again = await t.http('POST', `/api/v1/webhook-deliveries/${delivery.uuid}/redeliver`, { token: owner.token })
      expect(again.status).toBe(202)
      expect(again.body.data).toMatchObject({ uuid: delivery.uuid, status: 'pending' })
      const redelivered = await receiver.waitFor(3)
      expect(redelivered[2].headers['webhook-id']).toBe(got[0].headers['webhook-id'])
      await until(
        async () =>
          (await t.http('GET', `/api/v1/webhook-deliveries/${delivery.uuid}`, { token: owner.token })).body.data.attempts.length === 3,
      )
      await removeEndpoint(owner, endpoint.uuid)
    })

    it('records a receiver that hangs, answers 3 MB or closes the connection as a failed attempt, and goes on', async () => {
      const endpoint = await makeEndpoint(owner)
      const attemptOf = async (answer: Parameters<Receiver['enqueue']>[0]) => {
        receiver.enqueue(answer)
        const ping = await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`, { token: owner.token })
        return until(async () => {
          const read = await t.http('GET', `/api/v1/webhook-deliveries/${ping.body.data.uuid}`, { token: owner.token })
          return read.body.data.status !== 'pending' && read.body.data.attempts[0]
        })
      }
      const hung = await attemptOf({ hang: true })
      expect(hung).toMatchObject({ status_code: null, error: expect.stringContaining('WEBHOOK_TIMEOUT_MS') })
      expect(hung.duration_ms).toBeGreaterThanOrEqual(1400)
      const large = await attemptOf({ bytes: 3 * 1024 * 1024 })
      expect(large).toMatchObject({ status_code: null, error: expect.stringContaining('larger than') })
      const closed = await attemptOf({ close: true })
      expect(closed).toMatchObject({ status_code: null, error: expect.stringContaining('closed the connection') })
      const fine = await attemptOf({ status: 204 })
      expect(fine).toMatchObject({ status_code: 204, error: null })
      await removeEndpoint(owner, endpoint.uuid)
    })

    it('disables an endpoint at once on 410 Gone, and after failing for WEBHOOK_DISABLE_AFTER_SECONDS', async () => {
      const gone = await makeEndpoint(owner)
      receiver.enqueue({ status: 410 })
      await t.http('POST', `/api/v1/webhook-endpoints/${gone.uuid}/ping`, { token: owner.token })
      const disabled = await until(async () => {
        const read = await t.http('GET', `/api/v1/webhook-endpoints/${gone.uuid}`, { token: owner.token })
        return !read.body.data.is_active && read.body.data
      })
      expect(disabled.disabled_reason).toBe('The endpoint answered 410 Gone')
      // Disabled endpoints get no events; turning it on again clears the reason.
      const reenabled = await t.http('PUT', `/api/v1/webhook-endpoints/${gone.uuid}`, { token: owner.token, body: { is_active: true } })
      expect(reenabled.body.data).toMatchObject({ is_active: true, disabled_reason: null })

      // Failing since six days (the default limit is five): the next failure disables it.
      await t.sql(`update webhook_endpoints set failing_since = now() - interval '6 days' where uuid = ?`, [gone.uuid])
      receiver.enqueue({ status: 500 })
      await t.http('POST', `/api/v1/webhook-endpoints/${gone.uuid}/ping`, { token: owner.token })
      const stale = await until(async () => {
        const read = await t.http('GET', `/api/v1/webhook-endpoints/${gone.uuid}`, { token: owner.token })
        return !read.body.data.is_active && read.body.data
      })
      expect(stale.disabled_reason).toMatch(/^Every delivery attempt failed for 432000 seconds/)
      await removeEndpoint(owner, gone.uuid)
    })

    it('signs with both secrets for 24 hours after a rotation', async () => {
      const endpoint = await makeEndpoint(owner)
      const rotated = await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/rotate-secret`, { token: owner.token })
      expect(rotated.status).toBe(200)
      expect(rotated.body.data.secret).toMatch(/^whsec_/)
      expect(rotated.body.data.secret).not.toBe(endpoint.secret)
      await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`, { token: owner.token })
      const [got] = await receiver.waitFor(1)
      expect(got.headers['webhook-signature'].split(' ')).toHaveLength(2)
      expect(verify(rotated.body.data.secret, got).type).toBe('webhook_endpoint.ping')
      expect(verify(endpoint.secret, got).type).toBe('webhook_endpoint.ping')
      // Once the old secret has expired, only the new one signs.
      await t.sql(`update webhook_endpoints set previous_secret_expires_at = now() - interval '1 second' where uuid = ?`, [endpoint.uuid])
      await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`, { token: owner.token })
      const [, later] = await receiver.waitFor(2)
      expect(later.headers['webhook-signature'].split(' ')).toHaveLength(1)
      expect(() => verify(endpoint.secret, later)).toThrow()
      await removeEndpoint(owner, endpoint.uuid)
    })

    it('sends an attempt again, with the same webhook-id, when the job that held it was lost', async () => {
      const endpoint = await makeEndpoint(owner)
      receiver.fallback = { hang: true }
      const ping = await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`, { token: owner.token })
      const [first] = await receiver.waitFor(1)
      // As if the worker died mid-attempt: its lease is taken away and runs out.
      await t.sql(
        `update webhook_deliveries set lock_token = gen_random_uuid(), locked_until = now() - interval '1 second' where uuid = ?`,
        [ping.body.data.uuid],
      )
      receiver.fallback = { status: 200 }
      t.runtime.scheduler.wake(new Date())
      const [, second] = await receiver.waitFor(2)
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id'])
      const done = await until(async () => {
        const read = await t.http('GET', `/api/v1/webhook-deliveries/${ping.body.data.uuid}`, { token: owner.token })
        return read.body.data.status === 'succeeded' && read.body.data
      })
      // The lost job's attempt was never recorded; the hung one's end cannot record over the new lease.
      expect(done.attempts.map((attempt: { status_code: number }) => attempt.status_code)).toEqual([200])
      await removeEndpoint(owner, endpoint.uuid)
    })

    it('stops the pending deliveries of a deleted endpoint, and hides deliveries from other workspaces', async () => {
      const endpoint = await makeEndpoint(owner)
      receiver.fallback = { status: 500 }
      const ping = await t.http('POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`, { token: owner.token })
      await receiver.waitFor(1)
      const stranger = await t.make.user()
      expect((await t.http('GET', `/api/v1/webhook-deliveries/${ping.body.data.uuid}`, { token: stranger.token })).status).toBe(404)
      expect((await t.http('POST', `/api/v1/webhook-deliveries/${ping.body.data.uuid}/redeliver`, { token: stranger.token })).status).toBe(
        404,
      )
      await removeEndpoint(owner, endpoint.uuid)
      expect(await t.sql('select count(*)::int as n from webhook_deliveries where uuid = ?', [ping.body.data.uuid])).toEqual([{ n: 0 }])
      expect((await t.http('GET', `/api/v1/webhook-deliveries/${ping.body.data.uuid}`, { token: owner.token })).status).toBe(404)
    })
  })
})
