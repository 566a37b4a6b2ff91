/**
 * Workflow node types without the executor (src/workflows/nodes): each node
 * is run the way the executor runs it (expressions evaluated with `evaluateDeep`, then the type's
 * schema parses the result) with a NodeContext built by hand. HTTP requests go to a loopback
 * server (the test app allows private addresses, as test/llm-tools.test.ts does) with accounts
 * created through the API; the schedule trigger's cron and time zone checks; the registry and its
 * description.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Config } from '../src/platform/config.ts'
import { createWorkflowNodeServices } from '../src/workflows/workflow-node-services.ts'
import { evaluateDeep } from '../src/workflows/expressions.ts'
import { describeNodeTypes, NODE_TYPES, nodeType } from '../src/workflows/node-types.ts'
import { truthy } from '../src/workflows/nodes/branching.ts'
import { cronAfter } from '../src/platform/cron.ts'
import { NodeError, type NodeContext, type NodeResult, type WebhookResponse } from '../src/workflows/types.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { workspaceId } from './helpers/rows.ts'

/** Requests the loopback server received. */
interface Hit {
  method: string
  url: URL
  headers: http.IncomingHttpHeaders
  body: string
}

const SECRET = 'sk-node-secret-123'
/** A cap small enough for a test to go over. */
const MAX_RESPONSE_BYTES = 4096

describe('workflow node types', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let aliceWorkspace: number
  let server: http.Server
  let base: string
  let closedPort: number
  const hits: Hit[] = []

  beforeAll(async () => {
    t = await createTestApp({
      TOOL_ALLOW_PRIVATE_NETWORK: 'true',
      TOOL_TIMEOUT_MS: '5000',
      TOOL_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES),
    })
    alice = await t.make.user({ name: 'Alice Nodes' })
    bob = await t.make.user({ name: 'Bob Nodes' })
    aliceWorkspace = await workspaceId(t, alice.workspaceUuid)
    server = http.createServer(async (req, res) => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk)
      const hit = {
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://x'),
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      }
      hits.push(hit)
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'x-echo': String(req.headers.authorization ?? '') })
        res.end(JSON.stringify(value))
      }
      const path = hit.url.pathname
      if (path === '/hang') return
      if (path === '/text') {
        res.writeHead(200, { 'content-type': 'text/plain' })
        return void res.end('plain words')
      }
      if (path === '/big') {
        res.writeHead(200, { 'content-type': 'text/plain' })
        return void res.end('x'.repeat(MAX_RESPONSE_BYTES * 4))
      }
      const status = Number(hit.url.searchParams.get('status') ?? 200)
      json(status, { method: hit.method, path, query: Object.fromEntries(hit.url.searchParams), headers: hit.headers, body: hit.body })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
    // A port nobody listens on: a server opened and closed again.
    const probe = http.createServer()
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve))
    closedPort = (probe.address() as AddressInfo).port
    await new Promise<void>((resolve) => probe.close(() => resolve()))
  })
  afterAll(async () => {
    server?.closeAllConnections()
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()))
    await t?.close()
  })

  interface RunOptions {
    input?: unknown
    signal?: AbortSignal
    staticData?: Record<string, unknown>
    respond?: (response: WebhookResponse) => void
    config?: Config
    user?: TestUser
    workspace?: number
  }

  /** Runs node type `type` as the executor would: expressions evaluated over `input`, parameters parsed, then executed. */
  async function run(type: string, parameters: Record<string, unknown>, o: RunOptions = {}): Promise<NodeResult> {
    const node = nodeType(type)
    if (!node) throw new Error(`no node type ${type}`)
    const scope = {
      input: o.input,
      nodes: {},
      trigger: undefined,
      static: o.staticData ?? {},
      execution: { uuid: 'e', mode: 'manual', workflow_uuid: 'w' },
    }
    const params = node.parameters.parse(await evaluateDeep(parameters, scope))
    const user = o.user ?? alice
    const workspace = o.workspace ?? aliceWorkspace
    const context: NodeContext = {
      node: { id: 'n1', type, parameters },
      params,
      input: o.input,
      signal: o.signal ?? new AbortController().signal,
      execution: {
        id: 1,
        uuid: '00000000-0000-4000-8000-000000000001',
        mode: 'manual',
        workflowId: 1,
        workflowUuid: '00000000-0000-4000-8000-000000000002',
        workspaceId: workspace,
        userId: user.id,
      },
      staticData: o.staticData ?? {},
      deps: { orm: t.runtime.orm, config: o.config ?? t.config, log: t.runtime.log },
      services: createWorkflowNodeServices(t.runtime),
      actor: { userId: user.id, workspaceId: workspace },
      respond: o.respond ?? (() => {}),
    }
    return node.execute(context)
  }

  /** The NodeError a run rejects with. */
  async function nodeError(promise: Promise<unknown>): Promise<NodeError> {
    const error = await promise.then(
      () => new Error('expected the node to fail'),
      (e: unknown) => e,
    )
    expect(error).toBeInstanceOf(NodeError)
    return error as NodeError
  }

  describe('the registry (src/workflows/node-types.ts)', () => {
    it('holds the twelve node types of docs/api/workflows.md, each described with a JSON Schema of its parameters', () => {
      const names = [
        'webhook_trigger',
        'manual_trigger',
        'schedule_trigger',
        'http_request',
        'set',
        'if',
        'switch',
        'merge',
        'run_prompt',
        'run_agent',
        'respond_to_webhook',
        'wait',
      ]
      expect([...NODE_TYPES.keys()]).toEqual(names)
      const described = describeNodeTypes()
      expect(described.map((d) => d.type)).toEqual(names)
      for (const d of described) {
        expect(d.parameters).toMatchObject({ type: 'object', additionalProperties: false })
        expect(d.kind).toBe(d.type.endsWith('_trigger') ? 'trigger' : 'action')
      }
      const byType = Object.fromEntries(described.map((d) => [d.type, d]))
      expect(byType.if.outputs).toEqual(['true', 'false'])
      expect(byType.switch.outputs).toBe('dynamic')
      expect(byType.set.outputs).toBeNull()
      expect(byType.http_request.default_retry).toEqual({ max_attempts: 3, delay_ms: 200 })
      expect(byType.wait.default_retry).toBeNull()
      // Expression-capable fields accept an "=..." string next to their literal form.
      expect(JSON.stringify(byType.http_request.parameters.properties)).toContain('"pattern":"^="')
      expect(nodeType('nope')).toBeUndefined()
    })
  })

  describe('triggers', () => {
    it('webhook and manual triggers answer their input', async () => {
      const request = { method: 'POST', headers: {}, query: { a: '1' }, body: { b: 2 } }
      expect(await run('webhook_trigger', {}, { input: request })).toEqual({ output: request })
      expect(await run('manual_trigger', { description: 'Run by hand' }, { input: { x: 1 } })).toEqual({ output: { x: 1 } })
      expect(await run('manual_trigger', {})).toEqual({ output: null })
    })

    it('the schedule trigger answers the firing time, its time zone and its input', async () => {
      const fired = '2026-01-15T08:00:00.000Z'
      const result = await run(
        'schedule_trigger',
        { cron: '0 9 * * *', timezone: 'Europe/Paris', input: { report: 'daily' } },
        { input: { scheduled_at: fired } },
      )
      expect(result).toEqual({ output: { scheduled_at: fired, timezone: 'Europe/Paris', report: 'daily' } })
      const byHand = await run('schedule_trigger', { cron: '*/5 * * * *' })
      expect(byHand.output).toMatchObject({ timezone: 'UTC', scheduled_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) })
    })

    it.each([
      ['4 fields', { cron: '* * * *' }, 'cron', /5 or 6 fields, not 4/],
      ['7 fields', { cron: '0 0 0 * * * *' }, 'cron', /5 or 6 fields, not 7/],
      ['a minute out of range', { cron: '61 * * * *' }, 'cron', /Invalid cron expression/],
      ['letters', { cron: 'a b c d e' }, 'cron', /Invalid cron expression/],
      ['a day that never comes', { cron: '0 0 30 2 *' }, 'cron', /Invalid cron expression/],
      ['an unknown time zone', { cron: '0 9 * * *', timezone: 'Mars/Olympus' }, 'timezone', /Unknown time zone/],
      ['an expression as cron', { cron: '=$.cron' }, 'cron', /5 or 6 fields/],
    ])('refuses a schedule with %s', (_label, parameters, path, message) => {
      const parsed = nodeType('schedule_trigger')!.parameters.safeParse(parameters)
      expect(parsed.success).toBe(false)
      expect(parsed.error!.issues.map((issue) => [issue.path.join('.'), issue.message])).toEqual([[path, expect.stringMatching(message)]])
    })

    it('accepts 5 and 6 fields, and computes the next firing in the time zone', () => {
      const schema = nodeType('schedule_trigger')!.parameters
      expect(schema.safeParse({ cron: '0 9 * * MON-FRI', timezone: 'America/New_York' }).success).toBe(true)
      expect(schema.safeParse({ cron: '*/30 * * * * *' }).success).toBe(true)
      // 09:00 in Paris is 08:00 UTC in winter and 07:00 UTC in summer.
      expect(cronAfter('0 9 * * *', 'Europe/Paris', new Date('2026-01-15T00:00:00Z')).toISOString()).toBe('2026-01-15T08:00:00.000Z')
      expect(cronAfter('0 9 * * *', 'Europe/Paris', new Date('2026-07-15T07:30:00Z')).toISOString()).toBe('2026-07-16T07:00:00.000Z')
    })
  })

  describe('set', () => {
    it('merges evaluated values over an object input, and replaces it in mode replace', async () => {
      const input = { name: 'Ada', amount: 12 }
      const values = { greeting: "='Hello ' & $.name", double: '=amount * 2', fixed: [1, '=amount'] }
      expect((await run('set', { values }, { input })).output).toEqual({
        name: 'Ada',
        amount: 12,
        greeting: 'Hello Ada',
        double: 24,
        fixed: [1, 12],
      })
      expect((await run('set', { values, mode: 'replace' }, { input })).output).toEqual({
        greeting: 'Hello Ada',
        double: 24,
        fixed: [1, 12],
      })
      // Not an object: nothing to merge into.
      expect((await run('set', { values: { a: 1 } }, { input: [1, 2] })).output).toEqual({ a: 1 })
      expect((await run('set', { values: '={"whole": $.name}' }, { input })).output).toEqual({ ...input, whole: 'Ada' })
      expect((await run('set', {}, { input })).output).toEqual(input)
    })

    it('merges static_data into the workflow static data the executor stores', async () => {
      const staticData: Record<string, unknown> = { kept: true, last_id: 1 }
      const result = await run(
        'set',
        { values: { seen: true }, static_data: { last_id: '=$.id', first: '=$static.kept' } },
        { input: { id: 42 }, staticData },
      )
      expect(staticData).toEqual({ kept: true, last_id: 42, first: true })
      expect(result.output).toEqual({ id: 42, seen: true })
    })

    it('refuses unknown members and a mode it does not know', () => {
      const schema = nodeType('set')!.parameters
      expect(schema.safeParse({ values: {}, extra: 1 }).success).toBe(false)
      expect(schema.safeParse({ mode: 'append' }).success).toBe(false)
    })
  })

  describe('if and switch', () => {
    it('if passes its input to the true or the false branch', async () => {
      const input = { amount: 150 }
      expect(await run('if', { condition: '=amount > 100' }, { input })).toEqual({ output: input, branches: ['true'] })
      expect(await run('if', { condition: '=amount > 1000' }, { input })).toEqual({ output: input, branches: ['false'] })
      expect(await run('if', { condition: true }, { input })).toEqual({ output: input, branches: ['true'] })
      // An expression that matches nothing is false; other values by truthiness.
      expect((await run('if', { condition: '=$.missing' }, { input })).branches).toEqual(['false'])
      expect((await run('if', { condition: '=$.amount' }, { input })).branches).toEqual(['true'])
      expect(nodeType('if')!.outputs({})).toEqual(['true', 'false'])
    })

    it('takes values by truthiness as JSONata does', () => {
      for (const value of [true, 1, -2, 'x', [0, 1], { a: 0 }]) expect(truthy(value), JSON.stringify(value)).toBe(true)
      for (const value of [false, 0, '', null, undefined, [], [0, '', false], {}]) expect(truthy(value), JSON.stringify(value)).toBe(false)
    })

    it('switch fires the first matching case, every matching case in mode all, or the fallback', async () => {
      const cases = [
        { name: 'big', condition: '=amount > 100' },
        { name: 'even', condition: '=amount % 2 = 0' },
        { name: 'never', condition: false },
      ]
      const input = { amount: 150 }
      expect(await run('switch', { cases }, { input })).toEqual({ output: input, branches: ['big'] })
      expect((await run('switch', { cases, mode: 'all' }, { input })).branches).toEqual(['big', 'even'])
      expect((await run('switch', { cases }, { input: { amount: 7 } })).branches).toEqual(['fallback'])
      expect((await run('switch', { cases, fallback: false }, { input: { amount: 7 } })).branches).toEqual([])
      const switchType = nodeType('switch')!
      expect(switchType.outputs(switchType.parameters.parse({ cases }))).toEqual(['big', 'even', 'never', 'fallback'])
      expect(switchType.outputs(switchType.parameters.parse({ cases, fallback: false }))).toEqual(['big', 'even', 'never'])
    })

    it('switch refuses no cases, repeated case names and a case named fallback while the fallback is on', () => {
      const schema = nodeType('switch')!.parameters
      expect(schema.safeParse({ cases: [] }).success).toBe(false)
      const repeated = schema.safeParse({
        cases: [
          { name: 'a', condition: true },
          { name: 'a', condition: false },
        ],
      })
      expect(repeated.error?.issues.map((issue) => issue.path)).toEqual([['cases', 1, 'name']])
      expect(schema.safeParse({ cases: [{ name: 'fallback', condition: true }] }).success).toBe(false)
      expect(schema.safeParse({ cases: [{ name: 'fallback', condition: true }], fallback: false }).success).toBe(true)
    })
  })

  describe('merge', () => {
    it('appends the incoming outputs into one array, flattening array inputs one level', async () => {
      expect((await run('merge', {}, { input: [[1, 2], { a: 1 }, [[3]]] })).output).toEqual([1, 2, { a: 1 }, [3]])
      expect((await run('merge', {}, { input: { single: true } })).output).toEqual([{ single: true }])
      expect((await run('merge', {}, {})).output).toEqual([])
    })

    it('merges object inputs in mode merge_objects, later ones winning, others ignored', async () => {
      const output = (await run('merge', { mode: 'merge_objects' }, { input: [{ a: 1, b: 1 }, 'text', { b: 2 }, null] })).output
      expect(output).toEqual({ a: 1, b: 2 })
    })
  })

  describe('respond_to_webhook', () => {
    it('answers the webhook caller with status, headers and body (default: the input)', async () => {
      const sent: WebhookResponse[] = []
      const result = await run(
        'respond_to_webhook',
        { status: 201, headers: { 'X-Id': '=$string(id)' } },
        { input: { id: 7 }, respond: (r) => sent.push(r) },
      )
      expect(sent).toEqual([{ status: 201, headers: { 'x-id': '7' }, body: { id: 7 } }])
      expect(result.output).toEqual(sent[0])
      await run('respond_to_webhook', { body: { ok: '=$.id' } }, { input: { id: 8 }, respond: (r) => sent.push(r) })
      expect(sent[1]).toEqual({ status: 200, headers: {}, body: { ok: 8 } })
    })

    it('refuses a status outside 100..599 and header names HTTP does not allow', () => {
      const schema = nodeType('respond_to_webhook')!.parameters
      expect(schema.safeParse({ status: 99 }).success).toBe(false)
      expect(schema.safeParse({ status: 600 }).success).toBe(false)
      expect(schema.safeParse({ headers: { 'bad name': 'x' } }).success).toBe(false)
      expect(schema.safeParse({ headers: { 'x-a': 'line\r\nbreak' } }).success).toBe(false)
    })
  })

  describe('wait', () => {
    it('waits the evaluated number of seconds, then passes its input on', async () => {
      const started = Date.now()
      expect(await run('wait', { seconds: '=$.delay' }, { input: { delay: 0.05 } })).toEqual({ output: { delay: 0.05 } })
      expect(Date.now() - started).toBeGreaterThanOrEqual(45)
    })

    it('stops waiting as soon as the execution is canceled', async () => {
      const controller = new AbortController()
      const started = Date.now()
      setTimeout(() => controller.abort(), 30)
      const error = await nodeError(run('wait', { seconds: 3600 }, { signal: controller.signal }))
      expect(Date.now() - started).toBeLessThan(1000)
      expect(error).toMatchObject({ code: 'canceled', retryable: false })
      expect(await nodeError(run('wait', { seconds: 1 }, { signal: AbortSignal.abort() }))).toMatchObject({ code: 'canceled' })
    })

    it('refuses negative and longer-than-a-day waits', () => {
      const schema = nodeType('wait')!.parameters
      expect(schema.safeParse({ seconds: -1 }).success).toBe(false)
      expect(schema.safeParse({ seconds: 86_401 }).success).toBe(false)
      expect(schema.safeParse({ seconds: 86_400 }).success).toBe(true)
    })
  })

  describe('http_request', () => {
    const last = () => hits[hits.length - 1]

    it('sends method, query, headers and answers {status, headers, body} with a JSON body parsed', async () => {
      const result = await run(
        'http_request',
        { url: `=$.base & '/items'`, query: { q: '=$.term', page: 2, exact: true }, headers: { 'X-Trace': '=$.term' } },
        { input: { base, term: 'tea' } },
      )
      expect(last()).toMatchObject({ method: 'GET', body: '' })
      expect(Object.fromEntries(last().url.searchParams)).toEqual({ q: 'tea', page: '2', exact: 'true' })
      expect(last().headers['x-trace']).toBe('tea')
      expect(result.branches).toBeUndefined()
      expect(result.output).toMatchObject({
        status: 200,
        headers: { 'content-type': 'application/json' },
        body: { method: 'GET', path: '/items' },
      })
    })

    it('sends a JSON body, a string body as is under its content-type, and HEAD without reading a body', async () => {
      await run(
        'http_request',
        { method: 'POST', url: `${base}/create`, body: { name: '=$.name', tags: ['a'] } },
        { input: { name: 'Ada' } },
      )
      expect(last()).toMatchObject({ method: 'POST', body: '{"name":"Ada","tags":["a"]}' })
      expect(last().headers['content-type']).toBe('application/json')
      await run('http_request', { method: 'PUT', url: `${base}/raw`, headers: { 'Content-Type': 'text/plain' }, body: 'hello' })
      expect(last()).toMatchObject({ method: 'PUT', body: 'hello' })
      expect(last().headers['content-type']).toBe('text/plain')
      const head = await run('http_request', { method: 'HEAD', url: `${base}/head` })
      expect(last().method).toBe('HEAD')
      expect(head.output).toMatchObject({ status: 200, body: null })
    })

    it('reads the body as response_format asks', async () => {
      expect((await run('http_request', { url: `${base}/text` })).output).toMatchObject({ body: 'plain words' })
      expect((await run('http_request', { url: `${base}/json`, response_format: 'text' })).output).toMatchObject({
        body: expect.stringMatching(/^\{"method":"GET"/),
      })
      const notJson = await nodeError(run('http_request', { url: `${base}/text`, response_format: 'json' }))
      expect(notJson).toMatchObject({ code: 'invalid_response', retryable: false })
    })

    it('fails a 4xx answer for good, and a 5xx, 408 or 429 answer retryably', async () => {
      const notFound = await nodeError(run('http_request', { url: `${base}/x?status=404` }))
      expect(notFound).toMatchObject({ code: 'http_status', retryable: false })
      expect(notFound.message).toMatch(/^HTTP 404 Not Found from 127\.0\.0\.1:\d+: /)
      for (const status of [500, 503, 408, 429]) {
        expect(await nodeError(run('http_request', { url: `${base}/x?status=${status}` })), String(status)).toMatchObject({
          code: 'http_status',
          retryable: true,
        })
      }
    })

    it('fails retryably on a timeout, a body over TOOL_MAX_RESPONSE_BYTES and a refused connection', async () => {
      const started = Date.now()
      const timeout = await nodeError(run('http_request', { url: `${base}/hang`, timeout_ms: 100 }))
      expect(Date.now() - started).toBeLessThan(2000)
      expect(timeout).toMatchObject({ code: 'timeout', retryable: true, message: expect.stringMatching(/did not answer within 100 ms/) })
      expect(await nodeError(run('http_request', { url: `${base}/big` }))).toMatchObject({ code: 'too_large', retryable: true })
      expect(await nodeError(run('http_request', { url: `http://127.0.0.1:${closedPort}/` }))).toMatchObject({
        code: 'network',
        retryable: true,
      })
    })

    it('refuses private addresses for good unless TOOL_ALLOW_PRIVATE_NETWORK is on', async () => {
      const strict: Config = { ...t.config, tools: { ...t.config.tools, allowPrivateNetwork: false } }
      const count = hits.length
      const error = await nodeError(run('http_request', { url: `${base}/private` }, { config: strict }))
      expect(error).toMatchObject({ code: 'network', retryable: false, message: expect.stringMatching(/^Refused: /) })
      expect(hits).toHaveLength(count)
    })

    it('stops when the execution is canceled', async () => {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 30)
      expect(await nodeError(run('http_request', { url: `${base}/hang` }, { signal: controller.signal }))).toMatchObject({
        code: 'canceled',
        retryable: false,
      })
    })

    it.each([
      ['an ftp URL', { url: 'ftp://example.com/x' }, 'url'],
      ['a body on a GET', { url: 'https://example.com', body: { a: 1 } }, 'body'],
      ['the host header', { url: 'https://example.com', headers: { Host: 'evil.test' } }, 'headers.Host'],
      ['a timeout over 300000 ms', { url: 'https://example.com', timeout_ms: 300_001 }, 'timeout_ms'],
      ['an account that is not a uuid', { url: 'https://example.com', account_uuid: 'mine' }, 'account_uuid'],
      ['an unknown method', { url: 'https://example.com', method: 'TRACE' }, 'method'],
    ])('refuses %s', (_label, parameters, path) => {
      const parsed = nodeType('http_request')!.parameters.safeParse(parameters)
      expect(parsed.error?.issues.map((issue) => issue.path.join('.'))).toContain(path)
    })

    describe("with an account's credentials", () => {
      const provider = async (
        user: TestUser,
        auth_scheme: 'bearer' | 'query' | 'header' | 'basic',
        auth_parameter?: string,
        headers?: Record<string, string>,
      ) =>
        (
          await t
            .as(user, headers)
            .providers.create({ name: `Echo ${auth_scheme} ${Math.random()}`, type: 'tool', base_url: base, auth_scheme, auth_parameter })
        ).data
      const account = async (user: TestUser, providerUuid: string, headers?: Record<string, string>) =>
        (await t.as(user, headers).accounts.create({ name: 'Echo key', provider_uuid: providerUuid, secret: SECRET })).data

      it('applies the secret by the auth scheme, and never lets it into the output or an error', async () => {
        const bearer = await account(alice, (await provider(alice, 'bearer')).uuid)
        const result = await run('http_request', {
          url: `${base}/me`,
          account_uuid: bearer.uuid,
          headers: { Authorization: 'Bearer mine' },
        })
        expect(last().headers.authorization).toBe(`Bearer ${SECRET}`)
        const text = JSON.stringify(result.output)
        expect(text).not.toContain(SECRET)
        expect(text).toContain('[redacted]')
        const failed = await nodeError(run('http_request', { url: `${base}/me?status=401`, account_uuid: bearer.uuid }))
        expect(failed).toMatchObject({ code: 'http_status', retryable: false })
        expect(failed.message).not.toContain(SECRET)

        const query = await account(alice, (await provider(alice, 'query', 'api_key')).uuid)
        const queried = await run('http_request', { url: `${base}/search`, query: { q: 'x' }, account_uuid: query.uuid })
        expect(Object.fromEntries(last().url.searchParams)).toEqual({ q: 'x', api_key: SECRET })
        expect(JSON.stringify(queried.output)).not.toContain(SECRET)

        const header = await account(alice, (await provider(alice, 'header', 'X-Api-Key')).uuid)
        await run('http_request', { url: `${base}/h`, account_uuid: header.uuid })
        expect(last().headers['x-api-key']).toBe(SECRET)
      })

      it("refuses another workspace's account, and an account the execution's user may not see", async () => {
        const bobs = await account(bob, (await provider(bob, 'bearer')).uuid)
        const count = hits.length
        const error = await nodeError(run('http_request', { url: `${base}/me`, account_uuid: bobs.uuid }))
        expect(error).toMatchObject({ code: 'invalid_parameters', retryable: false })
        const team = await t.make.workspace(alice, { name: 'Other team' })
        const inTeam = { 'X-Workspace-UUID': team.uuid }
        const elsewhere = await account(alice, (await provider(alice, 'bearer', undefined, inTeam)).uuid, inTeam)
        expect(await nodeError(run('http_request', { url: `${base}/me`, account_uuid: elsewhere.uuid }))).toMatchObject({
          code: 'invalid_parameters',
        })
        expect(hits).toHaveLength(count)
      })
    })
  })

  describe('run_prompt and run_agent', () => {
    it('answer a missing prompt or agent as a NodeError not_found that is not retried', async () => {
      const missing = '01234567-89ab-4def-8123-456789abcdef'
      expect(await nodeError(run('run_prompt', { prompt_uuid: missing, input: { a: 1 } }))).toMatchObject({
        code: 'not_found',
        retryable: false,
      })
      expect(await nodeError(run('run_agent', { agent_uuid: missing, message: '=$.text' }, { input: { text: 'hi' } }))).toMatchObject({
        code: 'not_found',
        retryable: false,
      })
    })
  })
})
