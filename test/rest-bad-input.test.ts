/**
 * Bad input the router itself must answer well (docs/api/conventions.md, "Errors"): a malformed
 * uuid is a 400 naming the field in a sentence on both surfaces, a method a path does not have a
 * 405 with `Allow`, a word where a uuid belongs a 404, and a 500 shows nothing of its cause.
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type HttpResult, type TestApp, type TestUser } from './helpers/app.ts'
import { expectErrorBody } from './helpers/expect.ts'

/** zod's regular expression of a uuid begins so; no answer may carry it. */
const UUID_REGEX_TEXT = '[0-9a-fA-F]{8}'

/** The issues of a 400 on REST, or of a tRPC error. */
const issuesOf = (res: HttpResult) => res.body.issues ?? res.body.error?.data?.issues

function expectNotUuid(res: HttpResult, path: (string | number)[], message: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400)
  const issue = issuesOf(res).find((i: { path: unknown }) => JSON.stringify(i.path) === JSON.stringify(path))
  expect(issue, JSON.stringify(res.body)).toEqual({ origin: 'string', code: 'invalid_format', format: 'uuid', path, message })
  expect(JSON.stringify(res.body)).not.toContain(UUID_REGEX_TEXT)
}

const trpcQuery = (procedure: string, input: unknown) => `/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify(input))}`

describe('bad input on the REST and tRPC surfaces (docs/api/conventions.md, "Errors")', () => {
  let t: TestApp
  let ada: TestUser
  let agentUuid: string

  beforeAll(async () => {
    t = await createTestApp()
    ada = await t.make.user({ name: 'Ada Bad Input' })
    const agent = await t.http('POST', '/api/v1/agents', { token: ada.token, body: { name: 'Probe' } })
    expect(agent.status, JSON.stringify(agent.body)).toBe(201)
    agentUuid = agent.body.data.uuid
  })
  afterAll(async () => t?.close())

  describe('a malformed uuid is a 400 naming the field in a sentence', () => {
    it('in a path parameter: hexadecimal digits and hyphens that are no UUID', async () => {
      for (const value of ['0123-abcd', '12345678-1234-0234-8234-123456789012', `${randomUUID()}-0`]) {
        const res = await t.http('GET', `/api/v1/agents/${value}`, { token: ada.token })
        expectErrorBody(res, 400, 'BAD_REQUEST', 'Input validation failed')
        expectNotUuid(res, ['agent_uuid'], 'agent_uuid must be a UUID')
      }
    })

    it('in a query parameter', async () => {
      expectNotUuid(await t.http('GET', '/api/v1/messages?thread_uuid=nope', { token: ada.token }), ['thread_uuid'], 'thread_uuid must be a UUID')
      expectNotUuid(await t.http('GET', '/api/v1/agents?workspace_uuid=nope', { token: ada.token }), ['workspace_uuid'], 'workspace_uuid must be a UUID')
    })

    it('in a body field, nested ones named with their place', async () => {
      expectNotUuid(await t.http('POST', '/api/v1/threads', { token: ada.token, body: { agent_uuid: 'nope' } }), ['agent_uuid'], 'agent_uuid must be a UUID')
      const nested = await t.http('POST', '/api/v1/agents', { token: ada.token, body: { name: 'Nested', tools: [{ tool_uuid: 'nope' }] } })
      expectNotUuid(nested, ['tools', 0, 'tool_uuid'], 'tools[0].tool_uuid must be a UUID')
    })

    it('on the tRPC surface, with the same issues', async () => {
      const query = await t.http('GET', trpcQuery('agents.retrieve', { agent_uuid: 'nope' }), { token: ada.token })
      expect(query.body.error.data.code).toBe('BAD_REQUEST')
      expectNotUuid(query, ['agent_uuid'], 'agent_uuid must be a UUID')
      const mutation = await t.http('POST', '/trpc/threads.create', { token: ada.token, body: { agent_uuid: 'nope' } })
      expectNotUuid(mutation, ['agent_uuid'], 'agent_uuid must be a UUID')
    })

    it('in the run event stream path', async () => {
      const res = await t.http('GET', '/api/v1/runs/0123-abcd/events', { token: ada.token })
      expectErrorBody(res, 400, 'BAD_REQUEST', 'Input validation failed')
      expect(res.body.issues).toEqual([{ code: 'custom', path: ['run_uuid'], message: 'run_uuid must be a UUID' }])
    })
  })

  describe('a word where a uuid belongs names no route: 404', () => {
    it.each([
      ['GET', '/api/v1/agents/no-such-thing'],
      ['PUT', '/api/v1/agents/no-such-thing'],
      ['GET', '/api/v1/agents/no-such-thing/knowledge'],
      ['DELETE', '/api/v1/workspaces/null'],
      ['GET', '/api/v1/runs/no-such-thing/events'],
      ['GET', '/api/v1/nope'],
    ])('%s %s', async (method, path) => {
      for (const token of [ada.token, undefined]) {
        const res = await t.http(method, path, { token, ...(method === 'PUT' ? { body: {} } : {}) })
        expectErrorBody(res, 404, 'NOT_FOUND', 'Route not found')
      }
    })

    it('while the static paths beside the uuid ones still answer', async () => {
      expect((await t.http('GET', '/api/v1/agents/leaderboard', { token: ada.token })).status).toBe(200)
      expect((await t.http('GET', `/api/v1/agents/${agentUuid}`, { token: ada.token })).status).toBe(200)
      expect((await t.http('GET', `/api/v1/agents/${agentUuid.toUpperCase()}/`, { token: ada.token })).status).toBe(200)
      expectErrorBody(await t.http('GET', `/api/v1/agents/${randomUUID()}`, { token: ada.token }), 404, 'NOT_FOUND', 'Agent not found')
    })
  })

  describe('a method the path does not have is a 405 with Allow', () => {
    it.each([
      ['PATCH', '/api/v1/agents', 'GET, POST'],
      ['PATCH', '/api/v1/agents/', 'GET, POST'],
      ['PATCH', '/api/v1/agents/{agent}', 'GET, PUT, DELETE'],
      ['POST', '/api/v1/agents/{agent}', 'GET, PUT, DELETE'],
      ['DELETE', '/api/v1/agents/leaderboard', 'GET'],
      ['GET', '/api/v1/agents/generate', 'POST'],
      ['PUT', '/api/v1/workspaces/{workspace}/members', 'GET, POST'],
      // The plain routes beside the procedures: uploads, downloads, run events, webhooks.
      ['PUT', '/api/v1/media', 'POST'],
      ['DELETE', '/api/v1/media/some-key', 'GET'],
      ['POST', '/api/v1/runs/{run}/events', 'GET'],
      ['GET', '/api/v1/hooks/some-token', 'POST'],
    ])('%s %s allows %s', async (method, template, allow) => {
      const path = template.replace('{agent}', agentUuid).replace('{workspace}', ada.workspaceUuid).replace('{run}', randomUUID())
      for (const token of [ada.token, undefined]) {
        const res = await t.http(method, path, { token, ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }) })
        expectErrorBody(res, 405, 'METHOD_NOT_SUPPORTED')
        expect(res.headers.get('allow')).toBe(allow)
        expect(res.body.message).toBe(`${method} is not allowed on this path; it allows ${allow}`)
      }
    })

    it('leaves HEAD and OPTIONS as they were: HEAD answers without a body, OPTIONS is an unknown route', async () => {
      const head = await t.http('HEAD', '/api/v1/agents', { token: ada.token })
      expect(head.status).toBeLessThan(300)
      expect(head.headers.get('allow')).toBeNull()
      expectErrorBody(await t.http('OPTIONS', '/api/v1/agents'), 404, 'NOT_FOUND')
    })

    it('does not touch the tRPC surface', async () => {
      const res = await t.http('GET', '/trpc/system.ping')
      expect(res.status).toBe(200)
    })
  })

  describe('a 500 shows nothing of its cause', () => {
    it('answers "Internal server error" without a stack, a path or the database message, on both surfaces', async () => {
      await t.sql(`create or replace function refuse_prompt() returns trigger language plpgsql as $$
        begin raise exception 'secret internals at /srv/app/node_modules/x.js:12'; end $$`)
      await t.sql('create trigger refuse_prompt before insert on prompts for each row execute function refuse_prompt()')
      try {
        const rest = await t.http('POST', '/api/v1/prompts', { token: ada.token, body: { name: 'Boom', content: 'Hello' } })
        expectErrorBody(rest, 500, 'INTERNAL_SERVER_ERROR', 'Internal server error')
        const rpc = await t.http('POST', '/trpc/prompts.create', { token: ada.token, body: { name: 'Boom', content: 'Hello' } })
        expect(rpc.status).toBe(500)
        expect(rpc.body.error.message).toBe('Internal server error')
        expect(rpc.body.error.data.code).toBe('INTERNAL_SERVER_ERROR')
        expect(rpc.body.error.data.request_id).toBe(rpc.headers.get('x-request-id'))
        for (const res of [rest, rpc]) {
          const text = JSON.stringify(res.body)
          for (const leak of ['stack', 'secret', 'node_modules', 'refuse_prompt', '.ts:', '.js:']) expect(text).not.toContain(leak)
        }
      } finally {
        await t.sql('drop trigger refuse_prompt on prompts')
        await t.sql('drop function refuse_prompt()')
      }
    })
  })
})
