/**
 * The OpenAPI document tells the truth (src/http/openapi-document.ts, docs/api/conventions.md,
 * "The OpenAPI document"): real answers over HTTP, successes and errors, have a status the
 * document declares for their operation and a body that validates against the schema it
 * declares for that status (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses).
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type HttpResult, type TestApp, type TestUser } from './helpers/app.ts'
import { makeAgent, readOnlyToken } from './helpers/agents.ts'
import { checkAnswer } from './helpers/contract.ts'

interface Response {
  description: string
  headers?: Record<string, unknown>
  content?: Record<string, { schema?: Record<string, unknown> }>
}
interface Operation {
  operationId?: string
  description?: string
  tags?: string[]
  parameters?: ({ $ref: string } | { name: string; in: string })[]
  requestBody?: { required?: boolean }
  security?: Record<string, string[]>[]
  responses: Record<string, Response>
}
interface Document {
  info: { license?: { name: string } }
  servers: { url: string }[]
  tags: { name: string; description?: string }[]
  paths: Record<string, Record<string, Operation>>
  components: { schemas: Record<string, Record<string, unknown>>; securitySchemes: Record<string, unknown> }
}

describe('the OpenAPI document (GET /openapi.json)', () => {
  let t: TestApp
  let doc: Document
  let alice: TestUser
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  // ajv-formats is CommonJS: its plugin is the module's `default` under Node's ESM import.
  formats.default(ajv)
  const validators = new Map<string, ReturnType<typeof ajv.compile>>()

  /** The operation the document declares at `path` (its template) for `method`. */
  const operation = (method: string, path: string): Operation => {
    const op = doc.paths[path]?.[method.toLowerCase()]
    expect(op, `${method} ${path} is in the document`).toBeDefined()
    return op as Operation
  }

  /** Checks a real answer against what the document declares for `method` `path` and its status. */
  const expectDeclared = (res: HttpResult, method: string, path: string): void => {
    const op = operation(method, path)
    const status = String(res.status)
    expect(Object.keys(op.responses), `${method} ${path} declares ${status} (${JSON.stringify(res.body)})`).toContain(status)
    const schema = op.responses[status].content?.['application/json']?.schema
    if (!schema) {
      expect(res.body, `${method} ${path} ${status} declares no body`).toBeNull()
      return
    }
    const key = `${method} ${path} ${status}`
    let validate = validators.get(key)
    if (!validate) {
      // The components beside the schema, so that its `#/components/schemas/...` references resolve.
      validate = ajv.compile({ ...schema, components: doc.components })
      validators.set(key, validate)
    }
    expect(validate(res.body), `${key}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(res.body).slice(0, 2000)}`).toBe(true)
  }

  beforeAll(async () => {
    t = await createTestApp()
    const res = await t.http('GET', '/openapi.json')
    expect(res.status).toBe(200)
    doc = res.body
    alice = await t.make.user()
  }, 60_000)
  afterAll(async () => {
    await t?.close()
  })

  describe('what it declares', () => {
    it('has a license, the APP_URL server, a bearer scheme and a described tag for every tag used', () => {
      expect(doc.info.license?.name).toBe('MIT')
      expect(doc.servers.map((server) => server.url)).toEqual([t.config.appUrl])
      expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' })
      const used = new Set(Object.values(doc.paths).flatMap((item) => Object.values(item).flatMap((op) => op.tags ?? [])))
      const described = new Map(doc.tags.map((tag) => [tag.name, tag.description]))
      for (const tag of used) expect(described.get(tag), `tag ${tag}`).toMatch(/\w/)
    })

    it('lists each specified /v1 metrics path as a copy of the /api/v1 operation with its own operationId', () => {
      for (const resource of ['agents', 'workflows', 'workflow-executions', 'threads', 'messages']) {
        const { operationId, description, ...own } = operation('post', `/api/v1/${resource}/metrics`)
        const { operationId: copyId, description: copyDescription, ...copy } = operation('post', `/v1/${resource}/metrics`)
        expect(copy).toEqual(own)
        expect(copyId).toBe(`${operationId}-v1`)
        expect(copyDescription).toBe(`The same operation as \`POST /api/v1/${resource}/metrics\`.`)
        expect(description).toMatch(/^Count or average/)
      }
      const ids = Object.values(doc.paths).flatMap((item) => Object.values(item).map((op) => op.operationId))
      expect(new Set(ids).size).toBe(ids.length)
    })

    it('says which operations are public (security: []) and which need a bearer token', () => {
      for (const [method, path] of [
        ['post', '/api/v1/auth/sign-up'],
        ['post', '/api/v1/auth/sign-in'],
        ['get', '/api/v1/ping'],
        ['get', '/api/v1/media/{key}'],
        ['post', '/api/v1/hooks/{webhook_token}'],
      ]) {
        expect(operation(method, path).security, `${method} ${path}`).toEqual([])
      }
      expect(operation('get', '/api/v1/agents').security).toEqual([{ bearerAuth: [] }])
      for (const item of Object.values(doc.paths)) for (const op of Object.values(item)) expect(op.security, op.operationId).toBeDefined()
    })

    it('declares 201, 202 and 204 where the service answers them, with no 200 beside them and no body for a 204', () => {
      expect(Object.keys(operation('post', '/api/v1/agents').responses)).not.toContain('200')
      expect(operation('post', '/api/v1/agents').responses['201'].content?.['application/json']?.schema).toBeDefined()
      expect(operation('delete', '/api/v1/agents/{agent_uuid}').responses['204']).toEqual({
        description: expect.any(String),
        headers: { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } },
      })
      expect(Object.keys(operation('delete', '/api/v1/agents/{agent_uuid}').responses)).not.toContain('200')
      expect(Object.keys(operation('post', '/api/v1/agents/{agent_uuid}/train').responses)).not.toContain('200')
      expect(Object.keys(operation('post', '/api/v1/agents/{agent_uuid}/run').responses)).toEqual(expect.arrayContaining(['200', '202']))
    })

    it('declares every error status with the one Error schema, 429 on the rate-limited operations and 502/504 where a model is awaited', () => {
      for (const item of Object.values(doc.paths)) {
        for (const op of Object.values(item)) {
          for (const [status, response] of Object.entries(op.responses)) {
            if (!(Number(status) >= 400)) continue
            expect(response.content?.['application/json']?.schema, `${op.operationId} ${status}`).toEqual({
              $ref: '#/components/schemas/Error',
            })
          }
        }
      }
      expect(Object.keys(doc.components.schemas).filter((name) => name.startsWith('error.'))).toEqual([])
      expect(Object.keys(operation('post', '/api/v1/auth/sign-in').responses)).toContain('429')
      expect(Object.keys(operation('post', '/api/v1/media').responses)).toEqual(expect.arrayContaining(['413', '415']))
      expect(Object.keys(operation('post', '/api/v1/agents/generate').responses)).toEqual(expect.arrayContaining(['502', '504']))
    })

    it('declares X-Workspace-UUID where a workspace context is resolved, Cache-Control on the cached reads, X-Request-Id on every answer', () => {
      const refs = (op: Operation) => (op.parameters ?? []).flatMap((parameter) => ('$ref' in parameter ? [parameter.$ref] : []))
      const workspaceHeader = '#/components/parameters/WorkspaceUuid'
      expect(refs(operation('get', '/api/v1/agents'))).toContain(workspaceHeader)
      expect(refs(operation('post', '/api/v1/media'))).toContain(workspaceHeader)
      // Procedures outside any workspace (the user, their tokens, the workspaces list) do not read it.
      expect(refs(operation('get', '/api/v1/user'))).not.toContain(workspaceHeader)
      expect(refs(operation('post', '/api/v1/auth/sign-in'))).not.toContain(workspaceHeader)
      const cached = ['/api/v1/agents/leaderboard']
      for (const item of Object.entries(doc.paths)) {
        const [path, methods] = item
        for (const [method, op] of Object.entries(methods)) {
          const isCached = refs(op).includes('#/components/parameters/CacheControl')
          expect(isCached, `${method} ${path}`).toBe((method === 'post' && path.endsWith('/metrics')) || cached.includes(path))
          expect(op.description, `${method} ${path}`).toMatch(/\w.*\./)
          for (const [status, response] of Object.entries(op.responses)) {
            expect(response.headers?.['X-Request-Id'], `${method} ${path} ${status}`).toEqual({ $ref: '#/components/headers/RequestId' })
          }
        }
      }
      expect(operation('get', '/api/v1/agents/leaderboard').description).toMatch(/no-cache/)
      expect(operation('post', '/api/v1/agents').description).toMatch(/read-only token is refused/)
    })

    it('lets bodies with no required property be left out (logout, favourite, cancel), and requires the others', () => {
      for (const [method, path] of [
        ['post', '/api/v1/auth/logout'],
        ['post', '/api/v1/agents/{agent_uuid}/favorite'],
        ['post', '/api/v1/workflow-executions/{execution_uuid}/cancel'],
        ['post', '/api/v1/threads/{thread_uuid}/generate-name'],
        ['put', '/api/v1/agents/{agent_uuid}'],
      ]) {
        expect(operation(method, path).requestBody?.required, `${method} ${path}`).toBe(false)
      }
      expect(operation('post', '/api/v1/agents').requestBody?.required).toBe(true)
    })
  })

  describe('real answers validate against it', () => {
    it('the test helpers check every REST answer: an answer the document does not declare fails the calling test', () => {
      expect(() => checkAnswer('GET', '/api/v1/ping', 200, 'application/json', { data: { status: 'ok' } })).not.toThrow()
      expect(() => checkAnswer('GET', '/api/v1/ping', 200, 'application/json', { data: { status: 'down' } })).toThrow(/does not validate/)
      expect(() => checkAnswer('GET', '/api/v1/ping', 404, 'application/json', { code: 'NOT_FOUND' })).toThrow(/does not declare 404/)
      expect(() => checkAnswer('DELETE', '/api/v1/agents/0190f4a4-0000-7000-8000-000000000000', 204, null, { data: 1 })).toThrow(/with a body/)
      expect(() => checkAnswer('GET', '/api/v1/agents', 200, 'text/html', '<p>')).toThrow(/declares application\/json/)
      // A path no operation has still answers the Error body.
      expect(() => checkAnswer('GET', '/api/v1/no-such-thing', 404, 'application/json', { message: 'x' })).toThrow(/does not validate/)
      // A word where a uuid belongs reaches no operation: PUT on a model's slug is the path's 405.
      expect(() =>
        checkAnswer('PUT', '/api/v1/large-language-models/gpt-4o', 405, 'application/json', { code: 'METHOD_NOT_SUPPORTED', message: 'x', request_id: 'r' }),
      ).not.toThrow()
    })

    it('sign-up (201), ping, create (201), list, retrieve, a background run (202) and delete (204, no body)', async () => {
      const signUp = await t.http('POST', '/api/v1/auth/sign-up', {
        body: { name: 'Contract', email: 'contract@example.com', password: 'correct horse battery staple' },
      })
      expect(signUp.status).toBe(201)
      expectDeclared(signUp, 'POST', '/api/v1/auth/sign-up')
      expectDeclared(await t.http('GET', '/api/v1/ping'), 'GET', '/api/v1/ping')

      const created = await t.http('POST', '/api/v1/agents', {
        token: alice.token,
        body: { name: 'Contract agent', instruction: 'Answer.' },
      })
      expect(created.status).toBe(201)
      expectDeclared(created, 'POST', '/api/v1/agents')
      const uuid = String(created.body.data.uuid)

      const list = await t.http('GET', '/api/v1/agents', { token: alice.token })
      expect(list.status).toBe(200)
      expectDeclared(list, 'GET', '/api/v1/agents')
      const one = await t.http('GET', `/api/v1/agents/${uuid}`, { token: alice.token })
      expect(one.status).toBe(200)
      expectDeclared(one, 'GET', '/api/v1/agents/{agent_uuid}')

      const run = await t.http('POST', `/api/v1/agents/${uuid}/run`, { token: alice.token, body: { input: 'Hello', background: true } })
      expect(run.status).toBe(202)
      expectDeclared(run, 'POST', '/api/v1/agents/{agent_uuid}/run')
      const state = await t.http('GET', `/api/v1/runs/${run.body.data.run.uuid}`, { token: alice.token })
      expect(state.status).toBe(200)
      expectDeclared(state, 'GET', '/api/v1/runs/{run_uuid}')

      // The check is not vacuous: the same answers, altered, fail it.
      expect(() =>
        expectDeclared({ ...one, body: { data: { ...one.body.data, uuid: 7 } } }, 'GET', '/api/v1/agents/{agent_uuid}'),
      ).toThrow()
      expect(() => expectDeclared({ ...run, status: 201 }, 'POST', '/api/v1/agents/{agent_uuid}/run')).toThrow()

      const other = await makeAgent(t, alice)
      const deleted = await t.http('DELETE', `/api/v1/agents/${other.uuid}`, { token: alice.token })
      expect(deleted.status).toBe(204)
      expect(deleted.body).toBeNull()
      expectDeclared(deleted, 'DELETE', '/api/v1/agents/{agent_uuid}')
    })

    it('a workspace create (201) and its members list', async () => {
      const ws = await t.http('POST', '/api/v1/workspaces', { token: alice.token, body: { name: 'Contract team' } })
      expect(ws.status).toBe(201)
      expectDeclared(ws, 'POST', '/api/v1/workspaces')
      const members = await t.http('GET', `/api/v1/workspaces/${ws.body.data.uuid}/members`, { token: alice.token })
      expect(members.status).toBe(200)
      expectDeclared(members, 'GET', '/api/v1/workspaces/{workspace_uuid}/members')
    })

    it('errors: 400 (schema, malformed JSON), 401, 403 (read-only token), 404, 409, 415', async () => {
      const invalid = await t.http('POST', '/api/v1/agents', { token: alice.token, body: { name: 42, unknown_field: true } })
      expect(invalid.status).toBe(400)
      expect(invalid.body.issues.length).toBeGreaterThan(0)
      expectDeclared(invalid, 'POST', '/api/v1/agents')

      const { request_id: _dropped, ...withoutRequestId } = invalid.body
      expect(() => expectDeclared({ ...invalid, body: withoutRequestId }, 'POST', '/api/v1/agents')).toThrow()

      const malformed = await t.http('POST', '/api/v1/agents', {
        token: alice.token,
        rawBody: '{"name":',
        headers: { 'content-type': 'application/json' },
      })
      expect(malformed.status).toBe(400)
      expectDeclared(malformed, 'POST', '/api/v1/agents')

      const badQuery = await t.http('GET', '/api/v1/agents?per_page=1000', { token: alice.token })
      expect(badQuery.status).toBe(400)
      expectDeclared(badQuery, 'GET', '/api/v1/agents')

      const anonymous = await t.http('GET', '/api/v1/agents')
      expect(anonymous.status).toBe(401)
      expectDeclared(anonymous, 'GET', '/api/v1/agents')

      const readOnly = await readOnlyToken(t, alice)
      const forbidden = await t.http('POST', '/api/v1/agents', { token: readOnly.token, body: { name: 'Not allowed' } })
      expect(forbidden.status).toBe(403)
      expectDeclared(forbidden, 'POST', '/api/v1/agents')

      const missing = await t.http('GET', '/api/v1/agents/0190f4a4-0000-7000-8000-000000000000', { token: alice.token })
      expect(missing.status).toBe(404)
      expectDeclared(missing, 'GET', '/api/v1/agents/{agent_uuid}')

      const bob = await t.make.user()
      await t.make.member(alice.workspaceUuid, alice, bob)
      const again = await t.http('POST', `/api/v1/workspaces/${alice.workspaceUuid}/members`, {
        token: alice.token,
        body: { user_id: bob.id },
      })
      expect(again.status).toBe(409)
      expectDeclared(again, 'POST', '/api/v1/workspaces/{workspace_uuid}/members')

      const wrongType = await t.http('POST', '/api/v1/agents', {
        token: alice.token,
        rawBody: 'name=x',
        headers: { 'content-type': 'text/plain' },
      })
      expect(wrongType.status).toBe(415)
      expectDeclared(wrongType, 'POST', '/api/v1/agents')
    })
  })
})
