/**
 * The tRPC surface as a TypeScript front end uses it (docs/api/conventions.md): `createTRPCClient<AppRouter>`
 * over HTTP with batching and over WebSocket with connectionParams; error shape without a stack.
 */
import {
  createTRPCClient,
  createWSClient,
  httpBatchLink,
  httpSubscriptionLink,
  isTRPCClientError,
  splitLink,
  TRPCClientError,
  wsLink,
  type TRPCClient,
} from '@trpc/client'
import { EventSource } from 'eventsource'
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest'
import type { AppRouter } from '../routers/index.ts'
import type { RunEventRecord } from '../routers/client.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { ACME_KEY } from './helpers/expect.ts'

/** A fetch that records each HTTP request and the X-Request-Id of its response. */
function recordingFetch() {
  const calls: { url: string; method: string; requestId: string | null; status: number }[] = []
  const fetchFn: typeof fetch = async (input, init) => {
    const response = await fetch(input, init)
    calls.push({
      url: typeof input === 'string' ? input : input instanceof URL ? input.href : input.url,
      method: init?.method ?? 'GET',
      requestId: response.headers.get('x-request-id'),
      status: response.status,
    })
    return response
  }
  return { calls, fetch: fetchFn }
}

/** The TRPCClientError a client promise rejects with. */
async function clientError(promise: Promise<unknown>): Promise<TRPCClientError<AppRouter>> {
  const error = await promise.then(
    () => new Error('expected the call to fail'),
    (caught: unknown) => caught,
  )
  expect(isTRPCClientError(error)).toBe(true)
  return error as TRPCClientError<AppRouter>
}

describe('tRPC client (createTRPCClient<AppRouter>)', () => {
  let t: TestApp
  let ada: TestUser
  beforeAll(async () => {
    t = await createTestApp()
    ada = await t.make.user({ name: 'Ada Lovelace' })
  })
  afterAll(async () => t?.close())

  const httpClient = (headers: Record<string, string>, fetchFn?: typeof fetch) =>
    createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: `${t.url}/trpc`, headers: () => headers, fetch: fetchFn })] })

  describe('over HTTP with httpBatchLink (/trpc)', () => {
    it('answers user.me and system.ping in one batched request, with typed results', async () => {
      const recorder = recordingFetch()
      const client = httpClient({ authorization: `Bearer ${ada.token}` }, recorder.fetch)
      const [me, ping] = await Promise.all([client.user.me.query(), client.system.ping.query()])
      expectTypeOf(me.data.id).toEqualTypeOf<number>()
      expectTypeOf(me.data.email).toEqualTypeOf<string>()
      expectTypeOf(me.data.service_id).toEqualTypeOf<string | null>()
      expectTypeOf(ping.data.status).toEqualTypeOf<'ok'>()
      expect(me.data.id).toBe(ada.id)
      expect(me.data.email).toBe(ada.email)
      expect(me.data.first_name).toBe('Ada')
      expect(me.data.last_name).toBe('Lovelace')
      expect(me.data.service_id).toBeNull()
      expect(me.data.primary_workspace?.uuid).toBe(ada.workspaceUuid)
      expect(me.data.primary_workspace?.user).toBeNull()
      expect(ping).toEqual({ data: { status: 'ok' } })
      expect(recorder.calls).toHaveLength(1)
      const url = new URL(recorder.calls[0].url)
      expect(url.pathname).toBe('/trpc/user.me,system.ping')
      expect(url.searchParams.get('batch')).toBe('1')
      expect(recorder.calls[0]).toMatchObject({ method: 'GET', status: 200 })
    })

    it('answers the same data as the caller and the REST surface', async () => {
      const viaClient = await httpClient({ authorization: `Bearer ${ada.token}` }).user.me.query()
      expect(viaClient).toEqual(await t.as(ada).user.me())
      expect(viaClient).toEqual((await t.http('GET', '/api/v1/user', { token: ada.token })).body)
    })

    it('runs mutations with typed inputs and outputs (sign-in, token creation, user.token)', async () => {
      const anonymous = httpClient({})
      const signIn = await anonymous.auth.signIn.mutate({ email: ada.email, password: ada.password })
      expectTypeOf(signIn.data.access_token).toEqualTypeOf<string>()
      expectTypeOf(signIn.data.token_type).toEqualTypeOf<'Bearer'>()
      expect(signIn.data.token_type).toBe('Bearer')
      expect(signIn.data.access_token).toMatch(/^wst_/)
      const session = httpClient({ authorization: `Bearer ${signIn.data.access_token}` })
      const created = await session.accessTokens.create.mutate({ name: 'from the client', abilities: ['read'] })
      expectTypeOf(created.data.kind).toEqualTypeOf<'basic' | 'application'>()
      expect(created.data).toMatchObject({ kind: 'application', name: 'from the client', abilities: ['read'] })
      const current = await httpClient({ authorization: `Bearer ${created.data.access_token}` }).user.token.query()
      expect(current.data).toMatchObject({ uuid: created.data.uuid, kind: 'application', name: 'from the client', abilities: ['read'] })
    })

    it('answers UNAUTHORIZED in the tRPC error shape, without a stack, with the request id', async () => {
      const recorder = recordingFetch()
      const error = await clientError(httpClient({}, recorder.fetch).user.me.query())
      expect(error.message).toBe('Missing bearer token')
      expect(error.data?.code).toBe('UNAUTHORIZED')
      expect(error.data?.httpStatus).toBe(401)
      expect(error.data?.path).toBe('user.me')
      expect(error.data).not.toHaveProperty('stack')
      expect(error.shape).toBeDefined()
      expect(JSON.stringify(error.shape)).not.toContain('stack')
      expect(JSON.stringify(error.shape)).not.toMatch(/\.ts:\d+/)
      expect(recorder.calls).toHaveLength(1)
      expect(recorder.calls[0].status).toBe(401)
      expect(error.data?.request_id).toBe(recorder.calls[0].requestId)
    })

    it('answers UNAUTHORIZED for an unknown, a revoked and an expired token', async () => {
      const revoked = await t.make.user()
      await t.as(revoked).auth.logout({})
      const expired = await t.make.user()
      await t.sql("update access_tokens set expires_at = now() - interval '1 second' where user_id = ?", [expired.id])
      for (const token of [`wst_${'z'.repeat(43)}`, revoked.token, expired.token]) {
        const error = await clientError(httpClient({ authorization: `Bearer ${token}` }).user.me.query())
        expect(error.data?.code).toBe('UNAUTHORIZED')
        expect(error.message).toBe('Invalid, expired or revoked token')
      }
    })

    it('answers BAD_REQUEST with issues naming the field', async () => {
      const error = await clientError(httpClient({}).auth.signUp.mutate({ name: 'X', email: 'not-an-email', password: 'long enough' }))
      expect(error.data?.code).toBe('BAD_REQUEST')
      expect(error.data?.httpStatus).toBe(400)
      expect(error.message).toBe('Input validation failed')
      expect(error.data?.issues?.map((issue) => issue.path)).toEqual([['email']])
      const taken = await clientError(httpClient({}).auth.signUp.mutate({ name: 'X', email: ada.email, password: 'long enough' }))
      expect(taken.data?.code).toBe('BAD_REQUEST')
      expect(taken.data?.issues?.map((issue) => issue.path)).toEqual([['email']])
    })

    it('answers FORBIDDEN to a read-only token calling a mutation', async () => {
      const reader = await t.as(ada).accessTokens.create({ name: 'reader', abilities: ['read'] })
      const error = await clientError(
        httpClient({ authorization: `Bearer ${reader.data.access_token}` }).workspaces.create.mutate({ name: 'No' }),
      )
      expect(error.data?.code).toBe('FORBIDDEN')
      expect(error.data?.httpStatus).toBe(403)
      expect(error.message).toBe('This token is read-only')
    })

    it('gives each call of a batch the workspace its own input names (calls share one context)', async () => {
      const second = await t.make.workspace(ada)
      const created = await Promise.all([
        t.as(ada).agents.create({ name: 'In the primary one' }),
        t.as(ada).agents.create({ name: 'In the second one', workspace_uuid: second.uuid }),
      ])
      const recorder = recordingFetch()
      const client = httpClient({ authorization: `Bearer ${ada.token}` }, recorder.fetch)
      const [primary, other, again] = await Promise.all([
        client.agents.list.query({ workspace_uuid: ada.workspaceUuid }),
        client.agents.list.query({ workspace_uuid: second.uuid }),
        client.agents.list.query({}),
      ])
      expect(recorder.calls).toHaveLength(1)
      expect(primary.data.map((agent) => agent.uuid)).toEqual([created[0].data.uuid])
      expect(other.data.map((agent) => agent.uuid)).toEqual([created[1].data.uuid])
      expect(again.data.map((agent) => agent.uuid)).toEqual([created[0].data.uuid])
    })

    it('calls every list whose filters are all optional with no input at all, and a metric by its one procedure', async () => {
      const client = httpClient({ authorization: `Bearer ${ada.token}` })
      const [agents, workspaces, workflows, prompts, threads, tokens, board, executions, counts] = await Promise.all([
        client.agents.list.query(),
        client.workspaces.list.query(),
        client.workflows.list.query(),
        client.prompts.list.query(),
        client.threads.list.query(),
        client.accessTokens.list.query(),
        client.agents.leaderboard.query(),
        client.workflowExecutions.list.query(),
        client.workflowExecutions.counts.query(),
      ])
      // No input is the empty query: every default applies (page 1 of 15).
      expect(agents.meta).toMatchObject({ current_page: 1, per_page: 15 })
      expect(workspaces.data.map((workspace) => workspace.uuid)).toContain(ada.workspaceUuid)
      for (const list of [workflows, prompts, threads, tokens, executions]) expect(list.meta).toMatchObject({ current_page: 1 })
      expect(board.data).toBeInstanceOf(Array)
      expect(counts.data).toBeDefined()
      const metric = await client.metrics.agents.mutate({ calculation: 'accumulated_count' })
      expectTypeOf(metric.total).toEqualTypeOf<number | null>()
      expect(metric.total).toBeGreaterThanOrEqual(0)
    })

    it('reports each failure of a batch separately', async () => {
      const recorder = recordingFetch()
      const client = httpClient({}, recorder.fetch)
      const [ping, me] = await Promise.allSettled([client.system.ping.query(), client.user.me.query()])
      expect(ping).toEqual({ status: 'fulfilled', value: { data: { status: 'ok' } } })
      expect(me.status).toBe('rejected')
      const reason = me.status === 'rejected' ? (me.reason as TRPCClientError<AppRouter>) : undefined
      expect(reason?.data?.code).toBe('UNAUTHORIZED')
      expect(recorder.calls).toHaveLength(1)
    })

    it('carries X-Service-Authorization as a header', async () => {
      const scoped = await t.make.user({ serviceKey: ACME_KEY })
      const me = await httpClient({ authorization: `Bearer ${scoped.token}`, 'x-service-authorization': ACME_KEY }).user.me.query()
      expect(me.data).toMatchObject({ id: scoped.id, service_id: 'acme' })
      const error = await clientError(httpClient({ authorization: `Bearer ${scoped.token}` }).user.me.query())
      expect(error.data?.code).toBe('UNAUTHORIZED')
    })
  })

  describe('over WebSocket with wsLink (ws://.../trpc)', () => {
    const clients: { close: () => Promise<void> | void }[] = []
    afterAll(async () => {
      for (const client of clients) await client.close()
    })

    const wsClient = (connectionParams: Record<string, string>): TRPCClient<AppRouter> => {
      const socket = createWSClient({ url: `${t.url.replace(/^http/, 'ws')}/trpc`, connectionParams })
      clients.push(socket)
      return createTRPCClient<AppRouter>({ links: [wsLink({ client: socket })] })
    }

    it('authenticates with connectionParams { authorization: "Bearer ..." } and answers user.me', async () => {
      const client = wsClient({ authorization: `Bearer ${ada.token}` })
      const [me, ping] = await Promise.all([client.user.me.query(), client.system.ping.query()])
      expectTypeOf(me.data.id).toEqualTypeOf<number>()
      expect(me.data.id).toBe(ada.id)
      expect(me.data.email).toBe(ada.email)
      expect(me.data.primary_workspace?.uuid).toBe(ada.workspaceUuid)
      expect(ping.data.status).toBe('ok')
      expect(me).toEqual(await t.as(ada).user.me())
    })

    it('answers UNAUTHORIZED without a token, in the tRPC error shape without a stack', async () => {
      const client = wsClient({})
      const error = await clientError(client.user.me.query())
      expect(error.message).toBe('Missing bearer token')
      expect(error.data?.code).toBe('UNAUTHORIZED')
      expect(error.data?.httpStatus).toBe(401)
      expect(error.data).not.toHaveProperty('stack')
      expect(JSON.stringify(error.shape)).not.toContain('stack')
      expect(typeof error.data?.request_id).toBe('string')
      const ping = await client.system.ping.query()
      expect(ping.data.status).toBe('ok')
    })

    it('answers UNAUTHORIZED for a revoked token', async () => {
      const user = await t.make.user()
      await t.as(user).auth.logout({})
      const error = await clientError(wsClient({ authorization: `Bearer ${user.token}` }).user.me.query())
      expect(error.data?.code).toBe('UNAUTHORIZED')
      expect(error.message).toBe('Invalid, expired or revoked token')
    })

    it('takes the service key from connectionParams too', async () => {
      const scoped = await t.make.user({ serviceKey: ACME_KEY })
      const me = await wsClient({ authorization: `Bearer ${scoped.token}`, 'x-service-authorization': ACME_KEY }).user.me.query()
      expect(me.data).toMatchObject({ id: scoped.id, service_id: 'acme' })
      const error = await clientError(wsClient({ authorization: `Bearer ${scoped.token}` }).user.me.query())
      expect(error.data?.code).toBe('UNAUTHORIZED')
      const invalid = await clientError(
        wsClient({ authorization: `Bearer ${scoped.token}`, 'x-service-authorization': 'not-a-configured-key' }).user.me.query(),
      )
      expect(invalid.data?.code).toBe('UNAUTHORIZED')
      expect(invalid.message).toBe('Invalid service key')
    })

    it('runs mutations: logout over WebSocket revokes the token used', async () => {
      const user = await t.make.user()
      const client = wsClient({ authorization: `Bearer ${user.token}` })
      await client.auth.logout.mutate({})
      expect((await t.http('GET', '/api/v1/user', { token: user.token })).status).toBe(401)
    })
  })
  describe('the runs.events subscription', () => {
    /** A finished run of ada's (on the built-in local model: no provider key here). */
    const finishedRun = async () => {
      const agent = (await t.as(ada).agents.create({ name: 'Subscribed' } as never)).data
      return (await t.as(ada).runs.agent({ agent_uuid: agent.uuid, input: 'hello' })).data.run.uuid
    }
    /** What a front end does with an event: a function typed with the exported `RunEventRecord`. */
    const typeOf = (event: RunEventRecord): string => event.type
    /** Collects a subscription's events until it completes. */
    const collect = (client: TRPCClient<AppRouter>, input: { run_uuid: string; lastEventId?: string }) =>
      new Promise<{ id: string; type: string }[]>((resolve, reject) => {
        const seen: { id: string; type: string }[] = []
        client.runs.events.subscribe(input, {
          // Type-checked (npm run typecheck): the delivered event is exactly the exported type, field by field.
          onData: (event) => {
            expectTypeOf(event.data).toEqualTypeOf<RunEventRecord>()
            expectTypeOf(event.data).toEqualTypeOf<{ seq: number; type: string; data?: unknown; created_at: string }>()
            seen.push({ id: event.id, type: typeOf(event.data) })
          },
          onError: reject,
          onComplete: () => resolve(seen),
        })
      })

    it('streams tracked events over SSE (httpSubscriptionLink) until the run ends, resumable with lastEventId', async () => {
      const uuid = await finishedRun()
      const client = createTRPCClient<AppRouter>({
        links: [
          splitLink({
            condition: (op) => op.type === 'subscription',
            // Node has no EventSource of its own: the `eventsource` package stands in for a browser's.
            true: httpSubscriptionLink({ url: `${t.url}/trpc`, EventSource, connectionParams: () => ({ authorization: `Bearer ${ada.token}` }) }),
            false: httpBatchLink({ url: `${t.url}/trpc`, headers: () => ({ authorization: `Bearer ${ada.token}` }) }),
          }),
        ],
      })
      const all = await collect(client, { run_uuid: uuid })
      expect(all[0]).toEqual({ id: '1', type: 'run.started' })
      expect(all.at(-1)?.type).toBe('run.succeeded')
      expect(await collect(client, { run_uuid: uuid, lastEventId: '2' })).toEqual(all.slice(2))
    })

    it('streams the same events over WebSocket (wsLink)', async () => {
      const uuid = await finishedRun()
      const socket = createWSClient({ url: `${t.url.replace(/^http/, 'ws')}/trpc`, connectionParams: { authorization: `Bearer ${ada.token}` } })
      try {
        const client = createTRPCClient<AppRouter>({ links: [wsLink({ client: socket })] })
        const events = await collect(client, { run_uuid: uuid })
        expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)))
        expect(events.at(-1)?.type).toBe('run.succeeded')
      } finally {
        await socket.close()
      }
    })
  })
})
