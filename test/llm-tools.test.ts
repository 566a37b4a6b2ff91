/**
 * Executing an agent's `api` tools (src/catalog/tool-calls.ts, src/catalog/tool-http.ts): bindings with opened secrets, the HTTP call (template, query or body,
 * credential per scheme, timeout, size cap, private-address rule, redirects, non-2xx) and the AI
 * SDK tool set. Real HTTP servers on loopback; the model is a scripted AI SDK mock.
 */
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { gzipSync } from 'node:zlib'
import { generateText, stepCountIs } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Config } from '../src/platform/config.ts'
import { sendToolRequest, ToolHttpError } from '../src/catalog/tool-http.ts'
import { callTool, loadAgentTools, toToolSet, ToolCredentialUnavailableError, type ToolBinding } from '../src/catalog/tool-calls.ts'
import { idempotencyKeyOf } from '../src/runs/model-stream.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'

/** A request a test server received. */
interface Hit {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

interface TestServer {
  url: string
  port: number
  hits: Hit[]
  /** Whether the last `/big` answer was written to the end. */
  bigFinished: boolean | null
  close: () => Promise<void>
}

const TEN_MB = 10 * 1024 * 1024

/** A loopback server: echoes requests as JSON, and a few misbehaving routes. */
async function startServer(host = '127.0.0.1', redirectTo?: () => string): Promise<TestServer> {
  const state: TestServer = { url: '', port: 0, hits: [], bigFinished: null, close: async () => {} }
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk)
    const hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
    state.hits.push(hit)
    const url = new URL(hit.url, 'http://x')
    const json = (status: number, value: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(value))
    }
    if (redirectTo) {
      res.writeHead(302, { location: redirectTo() })
      res.end()
    } else if (url.pathname === '/hang') {
      // never answers
    } else if (url.pathname === '/slow-body') {
      res.writeHead(200, { 'content-type': 'text/plain' })
      res.write('first part…')
    } else if (url.pathname === '/big' || url.pathname === '/big-declared') {
      state.bigFinished = false
      const headers: Record<string, string | number> = { 'content-type': 'application/octet-stream' }
      if (url.pathname === '/big-declared') headers['content-length'] = TEN_MB
      res.writeHead(200, headers)
      const chunk = Buffer.alloc(64 * 1024, 97)
      const drained = () =>
        new Promise<void>((resolve) => {
          const done = () => {
            res.off('drain', done)
            res.off('close', done)
            resolve()
          }
          res.on('drain', done)
          res.on('close', done)
        })
      // Written with back-pressure, so what the client does not read stays unsent.
      for (let sent = 0; sent < TEN_MB && !res.destroyed; sent += chunk.length) {
        if (!res.write(chunk)) await drained()
      }
      if (!res.destroyed) res.end(() => (state.bigFinished = true))
    } else if (url.pathname.startsWith('/status/')) {
      json(Number(url.pathname.split('/')[2]), { error: 'no such city', city: url.searchParams.get('city') })
    } else if (url.pathname === '/leak') {
      // A careless upstream that repeats the credential it got.
      json(Number(url.searchParams.get('status') ?? 200), {
        message: `bad key ${hit.headers.authorization ?? ''} ${hit.headers['x-api-key'] ?? ''} ${url.searchParams.get('api_key') ?? ''}`,
      })
    } else if (url.pathname.startsWith('/hops/')) {
      const left = Number(url.pathname.split('/')[2])
      if (left > 0) {
        res.writeHead(302, { location: `/hops/${left - 1}` })
        res.end()
      } else json(200, { arrived: true })
    } else if (url.pathname === '/redirect') {
      res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to') ?? '/' })
      res.end()
    } else if (url.pathname === '/text') {
      res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
      res.end('plain words')
    } else if (url.pathname === '/gzip') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' })
      res.end(gzipSync(JSON.stringify({ zipped: true })))
    } else if (url.pathname === '/empty') {
      res.writeHead(204)
      res.end()
    } else {
      json(200, { method: hit.method, path: url.pathname, query: [...url.searchParams], headers: hit.headers, body: hit.body })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const address: AddressInfo | string | null = server.address()
  state.port = typeof address === 'object' && address ? address.port : 0
  state.url = `http://${host}:${state.port}`
  state.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return state
}

/** A hand-made binding (the transport tests need no database). */
const binding = (overrides: Partial<ToolBinding>): ToolBinding => ({
  toolId: 1,
  toolUuid: '00000000-0000-4000-8000-000000000001',
  name: 'test_tool',
  description: 'A test tool',
  method: 'GET',
  url: 'http://127.0.0.1:1/',
  inputSchema: { type: 'object', properties: {} },
  credential: null,
  requiresApproval: false,
  idempotent: false,
  ...overrides,
})

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } }

describe('agent api tools (src/catalog/tool-calls.ts)', () => {
  let t: TestApp
  let alice: TestUser
  let echo: TestServer
  /** Must never receive a request while private addresses are refused. */
  let forbidden: TestServer
  /** `config.tools` over the test app's (which allows private addresses, so loopback servers can be called). */
  const cfg = (tools: Partial<Config['tools']> = {}): Config => ({ ...t.config, tools: { ...t.config.tools, ...tools } })
  const agentId = async (uuid: string) => Number((await t.sql('select id::float8 as id from agents where uuid = ?', [uuid]))[0].id)
  const provider = async (name: string, auth_scheme: 'bearer' | 'header' | 'query' | 'basic' | 'none', auth_parameter?: string) =>
    (await t.as(alice).providers.create({ name, type: 'tool', base_url: echo.url, auth_scheme, auth_parameter })).data
  const account = async (providerUuid: string, secret: string | null, name = 'Key') =>
    (await t.as(alice).accounts.create({ name, provider_uuid: providerUuid, secret })).data
  const makeTool = async (input: { name: string; provider_uuid?: string | null; method?: 'GET' | 'POST'; url?: string; input_schema?: Record<string, unknown> }) =>
    (await t.as(alice).tools.create({ url: `${echo.url}/echo`, ...input })).data

  beforeAll(async () => {
    t = await createTestApp({ TOOL_ALLOW_PRIVATE_NETWORK: 'true', TOOL_TIMEOUT_MS: '5000' })
    alice = await t.make.user({ name: 'Alice Tools' })
    echo = await startServer()
    forbidden = await startServer()
  })
  afterAll(async () => {
    await echo?.close()
    await forbidden?.close()
    await t?.close()
  })

  describe('loadAgentTools', () => {
    it('answers the live api tools in order, with unique function names and the secret opened only for a live bound account of the tool provider', async () => {
      const bearer = await provider('Bearer Co', 'bearer')
      const other = await provider('Other Co', 'bearer')
      const live = await account(bearer.uuid, 'sk-live-0123456789abcdef')
      const gone = await account(bearer.uuid, 'sk-gone-0123456789abcdef')
      const bare = await account(bearer.uuid, null, 'No secret')
      const moved = await account(bearer.uuid, 'sk-moved-0123456789abcd')
      const weather = await makeTool({ name: 'Météo: forecast!', provider_uuid: bearer.uuid, input_schema: { properties: { city: { type: 'string' } } } })
      const twin = await makeTool({ name: 'météo forecast', provider_uuid: bearer.uuid })
      const noSecret = await makeTool({ name: 'No secret', provider_uuid: bearer.uuid })
      const movedTool = await makeTool({ name: 'Moved', provider_uuid: bearer.uuid })
      const deleted = await makeTool({ name: 'Deleted', provider_uuid: bearer.uuid })
      const unbound = await makeTool({ name: 'x'.repeat(80) })
      const agent = (
        await t.as(alice).agents.create({
          name: 'Caller',
          tools: [
            { tool_uuid: weather.uuid, account_uuid: live.uuid },
            { tool_uuid: twin.uuid, account_uuid: gone.uuid },
            { tool_uuid: noSecret.uuid, account_uuid: bare.uuid },
            { tool_uuid: movedTool.uuid, account_uuid: moved.uuid },
            { tool_uuid: deleted.uuid, account_uuid: live.uuid },
            { tool_uuid: unbound.uuid },
          ],
        })
      ).data
      // The account is soft-deleted behind the pivot's back, the tool moved to another provider, one tool deleted.
      await t.sql('update accounts set deleted_at = now() where uuid = ?', [gone.uuid])
      await t.sql('update tools set provider_id = (select id from providers where uuid = ?) where uuid = ?', [other.uuid, movedTool.uuid])
      await t.as(alice).tools.delete({ tool_uuid: deleted.uuid })

      const bindings = await loadAgentTools(t.runtime.orm.em.fork(), t.config, await agentId(agent.uuid))
      expect(bindings.map((b) => b.toolUuid)).toEqual([weather.uuid, twin.uuid, noSecret.uuid, movedTool.uuid, unbound.uuid])
      expect(bindings.map((b) => b.name)).toEqual(['meteo_forecast', 'meteo_forecast_2', 'no_secret', 'moved', 'x'.repeat(64)])
      for (const b of bindings) expect(b.name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
      expect(bindings[0]).toMatchObject({
        description: 'Météo: forecast!',
        method: 'GET',
        url: `${echo.url}/echo`,
        inputSchema: { type: 'object', properties: { city: { type: 'string' } } },
        credential: { scheme: 'bearer', parameter: null, secret: 'sk-live-0123456789abcdef' },
      })
      expect(typeof bindings[0].toolId).toBe('number')
      expect(bindings.slice(1).map((b) => b.credential)).toEqual([null, null, null, null])
      expect(bindings[4].inputSchema).toEqual({ type: 'object', properties: {} })
    })

    it('fails with a named error, without the secret, when a bound secret cannot be opened', async () => {
      const p = await provider('Rotated Co', 'bearer')
      const a = await account(p.uuid, 'sk-rotated-0123456789abcdef')
      const tool = await makeTool({ name: 'Rotated', provider_uuid: p.uuid })
      const agent = (await t.as(alice).agents.create({ name: 'Rotated', tools: [{ tool_uuid: tool.uuid, account_uuid: a.uuid }] })).data
      await t.sql(`update accounts set secret_key_id = 'ffffffffffffffff' where uuid = ?`, [a.uuid])
      const error = await loadAgentTools(t.runtime.orm.em.fork(), t.config, await agentId(agent.uuid)).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ToolCredentialUnavailableError)
      expect(String(error)).toContain(a.uuid)
      expect(String(error)).not.toContain('sk-rotated')
    })
  })

  describe('callTool', () => {
    it('puts the credential where each auth scheme says', async () => {
      const schemes = [
        { scheme: 'bearer', parameter: undefined, secret: 'sk-bearer-0123456789' },
        { scheme: 'header', parameter: 'X-Api-Key', secret: 'hk-header-0123456789' },
        { scheme: 'query', parameter: 'api_key', secret: 'qk query&=0123456789' },
        { scheme: 'basic', parameter: undefined, secret: 'user:pa:ss' },
        { scheme: 'none', parameter: undefined, secret: 'never-sent-0123456789' },
      ] as const
      const links = []
      for (const s of schemes) {
        const p = await provider(`Scheme ${s.scheme}`, s.scheme, s.parameter)
        const a = await account(p.uuid, s.secret)
        const tool = await makeTool({ name: `Scheme ${s.scheme}`, provider_uuid: p.uuid, url: `${echo.url}/echo?fixed=1` })
        links.push({ tool_uuid: tool.uuid, account_uuid: a.uuid })
      }
      const agent = (await t.as(alice).agents.create({ name: 'Schemes', tools: links })).data
      const bindings = await loadAgentTools(t.runtime.orm.em.fork(), t.config, await agentId(agent.uuid))
      const seen = []
      for (const b of bindings) {
        const outcome = await callTool(b, { q: 'x', api_key: 'model-tried' }, { config: cfg() })
        expect(outcome.ok, outcome.error).toBe(true)
        seen.push(echo.hits.at(-1)!)
      }
      const [bearer, header, query, basic, none] = seen
      expect(bearer.headers.authorization).toBe('Bearer sk-bearer-0123456789')
      expect(header.headers['x-api-key']).toBe('hk-header-0123456789')
      expect(header.headers.authorization).toBeUndefined()
      // The secret is the last query parameter and the model cannot override it.
      const params = new URL(query.url, 'http://x').searchParams
      expect(params.getAll('api_key')).toEqual(['qk query&=0123456789'])
      expect(params.get('fixed')).toBe('1')
      expect(query.headers.authorization).toBeUndefined()
      expect(basic.headers.authorization).toBe(`Basic ${Buffer.from('user:pa:ss').toString('base64')}`)
      expect(none.headers.authorization).toBeUndefined()
      expect(bindings[4].credential).toBeNull()
      expect(JSON.stringify(none)).not.toContain('never-sent')
      // A secret without a colon is a Basic user name with an empty password.
      await callTool(binding({ url: `${echo.url}/echo`, credential: { scheme: 'basic', parameter: null, secret: 'token-only' } }), {}, { config: cfg() })
      expect(echo.hits.at(-1)!.headers.authorization).toBe(`Basic ${Buffer.from('token-only:').toString('base64')}`)
    })

    it('sends the Idempotency-Key it is given to an idempotent tool only, the same for the same run and call', async () => {
      const key = idempotencyKeyOf('0193a3c4-0000-7000-8000-000000000001', 'call_1')
      expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
      expect(idempotencyKeyOf('0193a3c4-0000-7000-8000-000000000001', 'call_1')).toBe(key)
      expect(idempotencyKeyOf('0193a3c4-0000-7000-8000-000000000001', 'call_2')).not.toBe(key)
      expect(idempotencyKeyOf('0193a3c4-0000-7000-8000-000000000002', 'call_1')).not.toBe(key)
      await callTool(binding({ url: `${echo.url}/echo`, idempotent: true }), {}, { config: cfg(), idempotencyKey: key })
      expect(echo.hits.at(-1)!.headers['idempotency-key']).toBe(key)
      await callTool(binding({ url: `${echo.url}/echo`, idempotent: false }), {}, { config: cfg(), idempotencyKey: key })
      expect(echo.hits.at(-1)!.headers['idempotency-key']).toBeUndefined()
    })

    it('fills the URL template from the input, URL-encoded, and drops an unfilled query pair', async () => {
      const b = binding({ url: `${echo.url}/v1/{{ city }}/days/{{days}}?units={{units}}&lang={{lang}}&tag=x{{tag}}y` })
      const outcome = await callTool(b, { city: 'São Paulo/Centro?#1', days: 3, units: 'a&b=c', tag: null }, { config: cfg() })
      expect(outcome).toMatchObject({ ok: true, status: 200 })
      const hit = echo.hits.at(-1)!
      expect(hit.url).toBe('/v1/S%C3%A3o%20Paulo%2FCentro%3F%231/days/3?units=a%26b%3Dc&tag=xy')
      expect(outcome.output).toMatchObject({ path: '/v1/S%C3%A3o%20Paulo%2FCentro%3F%231/days/3', query: [['units', 'a&b=c'], ['tag', 'xy']] })
      // Dotted names reach into objects; arrays of scalars are comma-joined.
      await callTool(binding({ url: `${echo.url}/users/{{user.id}}?ids={{ids}}` }), { user: { id: 'u 1' }, ids: [1, 2] }, { config: cfg() })
      expect(echo.hits.at(-1)!.url).toBe('/users/u%201?ids=1%2C2')
    })

    it('refuses a path placeholder without a value, a dot segment and input that is not an object, without calling', async () => {
      const before = echo.hits.length
      const b = binding({ url: `${echo.url}/v1/{{city}}` })
      expect(await callTool(b, { days: 1 }, { config: cfg() })).toEqual({ ok: false, output: null, error: 'The tool URL needs "city", which the input does not give' })
      expect((await callTool(b, { city: '..' }, { config: cfg() })).error).toBe('"city" cannot be ".." in the URL path')
      expect((await callTool(b, ['x'], { config: cfg() })).error).toBe('The tool input must be a JSON object')
      expect(echo.hits.length).toBe(before)
    })

    it('sends the remaining input as query parameters for GET and DELETE, as a JSON body for POST, PUT and PATCH', async () => {
      const input = { id: 7, q: 'a b', tags: ['x', 'y'], filter: { on: true }, skip: null }
      for (const method of ['GET', 'DELETE'] as const) {
        await callTool(binding({ method, url: `${echo.url}/items/{{id}}` }), input, { config: cfg() })
        const hit = echo.hits.at(-1)!
        expect(hit.method).toBe(method)
        expect(hit.url).toBe('/items/7?q=a%20b&tags=x&tags=y&filter=%7B%22on%22%3Atrue%7D')
        expect(hit.body).toBe('')
      }
      for (const method of ['POST', 'PUT', 'PATCH'] as const) {
        const outcome = await callTool(binding({ method, url: `${echo.url}/items/{{id}}?v=1` }), input, { config: cfg() })
        expect(outcome.ok).toBe(true)
        const hit = echo.hits.at(-1)!
        expect(hit.method).toBe(method)
        expect(hit.url).toBe('/items/7?v=1')
        expect(hit.headers['content-type']).toBe('application/json')
        expect(JSON.parse(hit.body)).toEqual({ q: 'a b', tags: ['x', 'y'], filter: { on: true }, skip: null })
      }
      await callTool(binding({ method: 'POST', url: `${echo.url}/items` }), undefined, { config: cfg() })
      expect(echo.hits.at(-1)!.body).toBe('{}')
    })

    it('answers parsed JSON, text, decompressed bodies and null for an empty answer', async () => {
      expect((await callTool(binding({ url: `${echo.url}/text` }), {}, { config: cfg() })).output).toBe('plain words')
      expect((await callTool(binding({ url: `${echo.url}/gzip` }), {}, { config: cfg() })).output).toEqual({ zipped: true })
      expect(await callTool(binding({ url: `${echo.url}/empty` }), {}, { config: cfg() })).toEqual({ ok: true, status: 204, output: null })
    })

    it('cuts off a tool that hangs at TOOL_TIMEOUT_MS, before and during the body', async () => {
      for (const path of ['/hang', '/slow-body']) {
        const started = Date.now()
        const outcome = await callTool(binding({ url: `${echo.url}${path}` }), {}, { config: cfg({ timeoutMs: 300 }) })
        expect(outcome).toEqual({ ok: false, output: null, error: `127.0.0.1:${echo.port} did not answer within TOOL_TIMEOUT_MS (300 ms)` })
        expect(Date.now() - started).toBeLessThan(3000)
      }
    })

    it('reports a cancelled call when the run signal aborts', async () => {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 100)
      const outcome = await callTool(binding({ url: `${echo.url}/hang` }), {}, { config: cfg(), signal: controller.signal })
      expect(outcome).toEqual({ ok: false, output: null, error: 'The tool call was cancelled' })
    })

    it('stops reading a 10 MB answer past TOOL_MAX_RESPONSE_BYTES and reports a failed call', async () => {
      const outcome = await callTool(binding({ url: `${echo.url}/big` }), {}, { config: cfg({ maxResponseBytes: 1024 * 1024 }) })
      expect(outcome).toEqual({
        ok: false,
        output: null,
        error: `The answer of 127.0.0.1:${echo.port} is larger than TOOL_MAX_RESPONSE_BYTES (1048576 bytes): cut off`,
      })
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(echo.bigFinished).toBe(false)
      // A declared Content-Length over the cap is refused before reading.
      const declared = await callTool(binding({ url: `${echo.url}/big-declared` }), {}, { config: cfg({ maxResponseBytes: 1024 * 1024 }) })
      expect(declared.error).toMatch(/larger than TOOL_MAX_RESPONSE_BYTES/)
    })

    it('refuses loopback, unspecified and IPv4-mapped addresses, by IP or by name, while TOOL_ALLOW_PRIVATE_NETWORK is off', async () => {
      const strict = cfg({ allowPrivateNetwork: false })
      for (const host of ['127.0.0.1', 'localhost', '[::1]', '0.0.0.0', '[::ffff:127.0.0.1]', '127.1']) {
        const outcome = await callTool(binding({ url: `http://${host}:${forbidden.port}/x` }), {}, { config: strict })
        expect(outcome.ok, host).toBe(false)
        expect(outcome.error, host).toMatch(/^Refused: .* is \(or resolves to\) a private, loopback, link-local or unspecified address, and TOOL_ALLOW_PRIVATE_NETWORK is off$/)
      }
      for (const url of ['http://10.0.0.1:9/x', 'http://192.168.1.1:9/x', 'http://169.254.169.254/latest/meta-data', 'http://[fe80::1]:9/x', 'http://[fd00::1]:9/x']) {
        expect((await callTool(binding({ url }), {}, { config: strict })).error, url).toMatch(/^Refused: /)
      }
      expect(forbidden.hits).toHaveLength(0)
      const allowed = await callTool(binding({ url: `http://localhost:${forbidden.port}/x` }), {}, { config: cfg({ allowPrivateNetwork: true }) })
      expect(allowed).toMatchObject({ ok: true, status: 200 })
      expect(forbidden.hits).toHaveLength(1)
      forbidden.hits.length = 0
    })

    it('answers a non-2xx status as a failed call with the status and a short excerpt', async () => {
      const outcome = await callTool(binding({ url: `${echo.url}/status/404?city={{city}}` }), { city: 'Atlantis' }, { config: cfg() })
      expect(outcome).toEqual({
        ok: false,
        status: 404,
        output: { error: 'no such city', city: 'Atlantis' },
        error: `HTTP 404 Not Found from 127.0.0.1:${echo.port}: {"error":"no such city","city":"Atlantis"}`,
      })
      const long = await callTool(binding({ method: 'POST', url: `${echo.url}/status/500` }), { pad: 'z'.repeat(2000) }, { config: cfg() })
      expect(long.status).toBe(500)
      expect(long.error!.length).toBeLessThan(400)
    })

    it('never lets a secret into an error or an output, even when the upstream repeats it', async () => {
      const cases: ToolBinding['credential'][] = [
        { scheme: 'bearer', parameter: null, secret: 'sk-leaky-0123456789abcdef' },
        { scheme: 'header', parameter: 'X-Api-Key', secret: 'hk-leaky-0123456789abcdef' },
        { scheme: 'query', parameter: 'api_key', secret: 'qk leaky/0123456789+abcdef' },
        { scheme: 'basic', parameter: null, secret: 'leaky-user:leaky-pass' },
      ]
      for (const credential of cases) {
        const secret = credential!.secret
        for (const status of [200, 401]) {
          const outcome = await callTool(binding({ url: `${echo.url}/leak?status=${status}`, credential }), {}, { config: cfg() })
          expect(outcome.status).toBe(status)
          const text = JSON.stringify(outcome)
          for (const form of [secret, encodeURIComponent(secret), Buffer.from(secret).toString('base64')]) expect(text).not.toContain(form)
          expect(text).toContain('[redacted]')
        }
        // Transport failures (a closed port, a timeout) name the host only.
        const closed = await callTool(binding({ url: 'http://127.0.0.1:1/x', credential }), {}, { config: cfg() })
        expect(closed.error).toBe('127.0.0.1:1 refused the connection')
        expect(JSON.stringify(closed)).not.toContain(secret)
      }
    })
  })

  describe('redirects', () => {
    it('follows at most 3 redirects, checking each target', async () => {
      expect(await callTool(binding({ url: `${echo.url}/hops/3` }), {}, { config: cfg() })).toMatchObject({ ok: true, output: { arrived: true } })
      expect(await callTool(binding({ url: `${echo.url}/hops/4` }), {}, { config: cfg() })).toEqual({
        ok: false,
        output: null,
        error: `127.0.0.1:${echo.port} redirected more than 3 times`,
      })
      const ftp = await callTool(binding({ url: `${echo.url}/redirect?to=${encodeURIComponent('ftp://example.com/x')}` }), {}, { config: cfg() })
      expect(ftp.error).toBe(`127.0.0.1:${echo.port} redirected to a ftp: URL: only http and https are followed`)
    })

    it('refuses a redirect to a loopback address while private addresses are refused; the target receives nothing', async () => {
      // The first server listens on 127.0.0.2, let through by the (test-only) allow list.
      for (const target of [`http://127.0.0.1:${forbidden.port}/secret`, `http://localhost:${forbidden.port}/secret`, `http://[::1]:${forbidden.port}/secret`]) {
        const bouncer = await startServer('127.0.0.2', () => target)
        try {
          const request = { method: 'GET' as const, url: new URL(`${bouncer.url}/start`), headers: {}, credentialHeaders: {} }
          const limits = { timeoutMs: 2000, maxResponseBytes: 1024, allowPrivateNetwork: false }
          const error = await sendToolRequest(request, { ...limits, allowAddresses: ['127.0.0.2'] }).catch((e: unknown) => e)
          expect(error).toBeInstanceOf(ToolHttpError)
          expect(String(error)).toMatch(/^ToolHttpError: Refused: /)
          expect(bouncer.hits).toHaveLength(1)
          // Without the allow list the first hop is refused too.
          expect(await sendToolRequest(request, limits).catch((e: Error) => e.message)).toMatch(/^Refused: 127\.0\.0\.2/)
          expect(bouncer.hits).toHaveLength(1)
        } finally {
          await bouncer.close()
        }
      }
      expect(forbidden.hits).toHaveLength(0)
    })

    it('drops the credential on a redirect to another origin and turns a POST into a GET on 302/303', async () => {
      const credential = { scheme: 'bearer' as const, parameter: null, secret: 'sk-hop-0123456789abcdef' }
      await callTool(binding({ url: `${echo.url}/redirect?to=/echo`, credential }), {}, { config: cfg() })
      expect(echo.hits.at(-1)!.headers.authorization).toBe('Bearer sk-hop-0123456789abcdef')
      await callTool(binding({ url: `${echo.url}/redirect?to=${encodeURIComponent(`http://localhost:${echo.port}/echo`)}`, credential }), {}, { config: cfg() })
      expect(echo.hits.at(-1)!.url).toBe('/echo')
      expect(echo.hits.at(-1)!.headers.authorization).toBeUndefined()
      for (const [status, method, body] of [['303', 'GET', ''], ['302', 'GET', ''], ['307', 'POST', '{"a":1}'], ['308', 'POST', '{"a":1}']]) {
        await callTool(binding({ method: 'POST', url: `${echo.url}/redirect?status=${status}&to=/echo` }), { a: 1 }, { config: cfg() })
        expect(echo.hits.at(-1), status).toMatchObject({ method, body, url: '/echo' })
      }
    })
  })

  describe('toToolSet with generateText', () => {
    it('runs a good call, reports a failed call, invalid arguments and an unknown tool as tool errors, and the loop goes on', async () => {
      const weather = binding({
        name: 'get_weather',
        description: 'Weather for a city',
        url: `${echo.url}/weather/{{city}}`,
        inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
        credential: { scheme: 'bearer', parameter: null, secret: 'sk-model-0123456789abcdef' },
      })
      const broken = binding({ name: 'broken', url: `${echo.url}/status/503` })
      let step = 0
      const model = new MockLanguageModelV4({
        doGenerate: async () => {
          step += 1
          if (step === 1) {
            return {
              content: [
                { type: 'tool-call', toolCallId: 'good', toolName: 'get_weather', input: '{"city":"Oslo"}' },
                { type: 'tool-call', toolCallId: 'failed', toolName: 'broken', input: '{}' },
                { type: 'tool-call', toolCallId: 'invalid', toolName: 'get_weather', input: '{"city":5}' },
                { type: 'tool-call', toolCallId: 'unknown', toolName: 'no_such_tool', input: '{}' },
              ],
              finishReason: { unified: 'tool-calls', raw: undefined },
              usage,
              warnings: [],
            }
          }
          return { content: [{ type: 'text', text: 'Oslo is fine.' }], finishReason: { unified: 'stop', raw: undefined }, usage, warnings: [] }
        },
      })
      const before = echo.hits.length
      const result = await generateText({
        model,
        prompt: 'Weather in Oslo?',
        tools: toToolSet([weather, broken], { config: cfg() }),
        stopWhen: stepCountIs(cfg().llm.maxSteps),
      })
      expect(result.text).toBe('Oslo is fine.')
      expect(result.steps).toHaveLength(2)
      // Only the two valid calls reached the server.
      expect(echo.hits.slice(before).map((hit) => hit.url).sort()).toEqual(['/status/503', '/weather/Oslo'])
      expect(echo.hits.find((hit) => hit.url === '/weather/Oslo')!.headers.authorization).toBe('Bearer sk-model-0123456789abcdef')

      // The model saw the tool definitions with the JSON schemas.
      const firstCall = model.doGenerateCalls[0]
      expect(firstCall.tools?.map((definition) => definition.name)).toEqual(['get_weather', 'broken'])
      expect(firstCall.tools?.[0]).toMatchObject({ type: 'function', description: 'Weather for a city', inputSchema: weather.inputSchema })

      const parts = result.steps[0].content
      expect(parts.find((part) => part.type === 'tool-result')).toMatchObject({ toolCallId: 'good', output: { path: '/weather/Oslo' } })
      const errors = Object.fromEntries(parts.flatMap((part) => (part.type === 'tool-error' ? [[part.toolCallId, part.error]] : [])))
      expect(Object.keys(errors).sort()).toEqual(['failed', 'invalid', 'unknown'])
      expect(errors.failed).toBeInstanceOf(Error)
      expect(String(errors.failed)).toBe(`Error: HTTP 503 Service Unavailable from 127.0.0.1:${echo.port}: {"error":"no such city","city":null}`)
      expect(String(errors.invalid)).toMatch(/Invalid input for tool get_weather.*input\/city must be string/s)
      expect(String(errors.unknown)).toMatch(/unavailable tool 'no_such_tool'/)

      // What the model received back: one tool message with a result and three error texts.
      const toolMessage = model.doGenerateCalls[1].prompt.find((message) => message.role === 'tool')
      const outputs = Object.fromEntries((toolMessage?.content ?? []).flatMap((part) => (part.type === 'tool-result' ? [[part.toolCallId, part.output]] : [])))
      expect(outputs.good).toMatchObject({ type: 'json' })
      expect(outputs.failed).toEqual({ type: 'error-text', value: `Error: HTTP 503 Service Unavailable from 127.0.0.1:${echo.port}: {"error":"no such city","city":null}` })
      expect(outputs.invalid).toMatchObject({ type: 'error-text' })
      expect(outputs.unknown).toMatchObject({ type: 'error-text' })
      expect(JSON.stringify(model.doGenerateCalls[1].prompt)).not.toContain('sk-model-0123456789abcdef')
    })
  })
})
